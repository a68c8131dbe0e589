"""Locks on paths, so two extractbench runs never write one file at once.

A run record, JUnit file or HTML report written by two runs at the same time would hold
whichever run renamed its file last: a failed run's record silently replaced by a passing
one's. A run therefore holds ``<path>.lock`` for each of its outputs, from its start to its
last write (:class:`OutputLocks`); a second run on one of those paths fails at once with
one line naming the path and the holder's pid (:class:`OutputBusy`).

The lock is ``fcntl.flock`` on ``<path>.lock`` (the kernel releases it when the holder
dies, even by SIGKILL: a lock file left behind holds nothing). The holder writes its pid,
host and start time into the file; it deletes the file when it lets go, and a taker checks
that the file it locked is still the one at that path (the lock-file-deletion race). POSIX
only (fcntl), like the rest of the harness.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from types import TracebackType

from extractbench.suites import safe_json

__all__ = ["OutputBusy", "PathLock", "OutputLocks", "lock_file", "held_here"]

# lock files this process holds, by the resolved path they guard
_HELD: dict[Path, PathLock] = {}
_HELD_GUARD = threading.Lock()


class OutputBusy(OSError):
    """Another process holds the lock of a path this run would write.

    Attributes:
        path: the guarded path.
        holder: what the holder wrote into the lock file (``pid``, ``host``, ``since``),
            or empty when it could not be read.
    """

    def __init__(self, path: Path, holder: dict[str, object], purpose: str) -> None:
        self.path = path
        self.holder = holder
        who = f"pid {holder.get('pid', 'unknown')}"
        if holder.get("host") and holder.get("host") != socket.gethostname():
            who += f" on {holder['host']}"
        if holder.get("since"):
            who += f", since {holder['since']}"
        super().__init__(
            f"another extractbench run is {purpose} {path} ({who}); wait for it to end or "
            "give this run another path"
        )


def lock_file(path: Path) -> Path:
    """``<path>.lock``: the lock file guarding ``path``."""
    return path.with_name(path.name + ".lock")


def _key(path: Path) -> Path:
    return Path(os.path.abspath(Path(path).expanduser()))


def held_here(path: Path) -> bool:
    """Whether this process holds the lock of ``path``."""
    with _HELD_GUARD:
        return _key(path) in _HELD


def _holder(lock: Path) -> dict[str, object]:
    try:
        data = safe_json.loads(lock.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class PathLock:
    """The lock of one path (``<path>.lock``), taken by :meth:`acquire`.

    Args:
        path: the path it guards (the lock file sits beside it; its folder is created).
        purpose: what the holder does, for the message (``writing``, ``fetching into``).
    """

    def __init__(self, path: Path, purpose: str = "writing") -> None:
        self.path = _key(path)
        self.lock = lock_file(self.path)
        self.purpose = purpose
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def acquire(self, *, wait: bool = False) -> PathLock:
        """Take the lock; with ``wait``, wait for another holder to let go.

        Raises:
            OutputBusy: another process holds it (``wait=False``), or another object of
                this process does.
            OSError: the lock file cannot be created (a read-only or missing folder that
                cannot be made).
        """
        with _HELD_GUARD:
            if self.path in _HELD:
                raise OutputBusy(self.path, {"pid": os.getpid()}, self.purpose)
        self.lock.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                os.close(fd)
                raise OutputBusy(self.path, _holder(self.lock), self.purpose) from None
            except BaseException:
                os.close(fd)
                raise
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.lock))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the holder deleted it as we locked: lock the new one
        facts = {"pid": os.getpid(), "host": socket.gethostname(),
                 "since": time.strftime("%Y-%m-%d %H:%M:%S")}  # fmt: skip
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(facts).encode(), 0)
        except BaseException:
            # a full disk: a descriptor kept open would hold the lock, and this run's own
            # write would then be told another run holds it
            self._drop(fd)
            raise
        self._fd = fd
        with _HELD_GUARD:
            _HELD[self.path] = self
        return self

    def release(self) -> None:
        """Let go (delete the lock file, then unlock); a no-op when not held."""
        if self._fd is None:
            return
        with _HELD_GUARD:
            _HELD.pop(self.path, None)
        fd, self._fd = self._fd, None
        self._drop(fd)

    def _drop(self, fd: int) -> None:
        """Delete the lock file, then close ``fd`` (which holds its lock)."""
        try:
            self.lock.unlink(missing_ok=True)
        except OSError:
            pass  # a read-only folder now: the lock still ends with the descriptor
        os.close(fd)

    def __enter__(self) -> PathLock:
        return self if self.held else self.acquire()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


class OutputLocks:
    """The locks of every output of a run, taken together: all or none.

    The run's controller takes them at its start (``acquire``) and lets go after its
    last write (``release``); :func:`suites.files.write_output` of a held path then
    writes without taking the lock again.

    Args:
        paths: the outputs (run record, JUnit, HTML, markdown summary, exports); the
            same path twice counts once.
    """

    def __init__(self, paths: Iterable[Path]) -> None:
        self.locks = [PathLock(p) for p in sorted({_key(p) for p in paths})]
        self.unwritable: dict[Path, OSError] = {}

    def acquire(self, *, skip_unwritable: bool = False) -> OutputLocks:
        """Take every lock (sorted by path, so two runs never wait on each other).

        Args:
            skip_unwritable: a path whose lock file cannot be created (its folder cannot
                be made or written) is left unlocked and noted in :attr:`unwritable`
                (its write fails later, as an output error) instead of raising.

        Raises:
            OutputBusy: another run holds one of them (the ones taken are let go).
            OSError: a lock file cannot be created (without ``skip_unwritable``).
        """
        try:
            for lock in self.locks:
                try:
                    lock.acquire()
                except OutputBusy:
                    raise
                except OSError as exc:
                    if not skip_unwritable:
                        raise
                    self.unwritable[lock.path] = exc
        except BaseException:
            self.release()
            raise
        return self

    def release(self) -> None:
        """Let go of every lock taken."""
        for lock in reversed(self.locks):
            lock.release()

    def __enter__(self) -> OutputLocks:
        return self if all(lock.held for lock in self.locks) else self.acquire()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()
