"""A cache of data derived from the benchmark files (chunk spans, normalised tables, items).

Every xdist worker builds the same items at collection; deriving them once and reading
the result back keeps collection fast. Workers that collect at once derive an entry once:
the first holds a lock beside it while it derives, the others wait and read it. Entries are JSON files in the user cache
(``<cache>/derived/``), named by a digest of everything the result depends on, written
atomically so concurrent workers never read half a file. The temporary files of writers
killed by SIGKILL (``.NAME.*.tmp``, never read) are deleted by the next write once an hour
old.

An entry is never trusted on its name alone: it holds the full digest of its inputs
(``source``) and the sha256 of its own value (``sha256``), both checked on every read. An
entry that is edited, truncated, malformed or made from other inputs is rebuilt and
replaced; offline (``--offline``, ``$EXTRACTBENCH_OFFLINE``) it is a
:class:`suites.item.DataError` naming the file instead, since rebuilding may need a
download (a tokenizer).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from extractbench.suites import safe_json
from extractbench.suites.datasets.fetch import OFFLINE_ENV
from extractbench.suites.files import atomic_write
from extractbench.suites.item import DataError
from extractbench.suites.suite_options import truthy

__all__ = ["cached_json", "digest_of", "entry_path", "offline", "value_digest", "FORMAT"]

STALE_TMP_S = 3600  # a temporary file this old belongs to no live writer
FORMAT = 2  # entry layout: {"format", "name", "source", "sha256", "value"}

_OFFLINE: ContextVar[bool | None] = ContextVar("derived_cache_offline", default=None)


def digest_of(parts: Iterable[bytes | str]) -> str:
    """Hex SHA-256 over ``parts`` (strings UTF-8 encoded), NUL-separated."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8") if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()


def value_digest(value: Any) -> str:
    """Hex SHA-256 of a JSON-safe value in canonical form (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@contextlib.contextmanager
def offline(flag: bool) -> Iterator[None]:
    """Within the block, a damaged entry is an error (``flag`` True) or rebuilt (False),
    whatever ``$EXTRACTBENCH_OFFLINE`` says (the run's ``--offline`` decides)."""
    token = _OFFLINE.set(flag)
    try:
        yield
    finally:
        _OFFLINE.reset(token)


def _is_offline() -> bool:
    flag = _OFFLINE.get()
    return truthy(os.environ.get(OFFLINE_ENV, "")) if flag is None else flag


def entry_path(name: str, key: str) -> Path:
    """Where the entry ``name`` for inputs of digest ``key`` lives."""
    from extractbench.suites.files import cache_dir

    return cache_dir() / "derived" / f"{name}-v{FORMAT}-{key[:24]}.json"


def _check(path: Path, name: str, key: str) -> tuple[Any, str]:
    """(value, "") for a sound entry; (None, "") when there is none; (None, why) when it
    is there but cannot be trusted."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:  # absent or unreadable: built again (and written where possible)
        return None, ""
    except UnicodeDecodeError:
        return None, "is not UTF-8"
    try:
        entry = safe_json.loads(text)
    except ValueError as exc:
        return None, f"is not valid JSON ({getattr(exc, 'msg', exc)})"
    wanted = {"format", "name", "source", "sha256", "value"}
    if not isinstance(entry, dict) or set(entry) != wanted or entry["format"] != FORMAT:
        return None, f"is not a derived-cache entry of format {FORMAT}"
    if entry["name"] != name or entry["source"] != key:
        return None, "was derived from other inputs than this run's"
    if entry["sha256"] != value_digest(entry["value"]):
        return None, "does not match its own sha256 (edited or damaged)"
    return entry["value"], ""


def cached_json(name: str, key: str, compute: Callable[[], Any]) -> Any:
    """Return ``compute()``, cached as ``<cache>/derived/<name>-v2-<key[:24]>.json``.

    Args:
        name: what is cached (``fda-chunks``), for people reading the folder.
        key: digest of every input the result depends on (see :func:`digest_of`).
        compute: builds a JSON-safe value; only called when no sound entry exists.

    An entry is used only when it holds ``key`` in full and its value matches its own
    sha256; otherwise the value is computed again and the entry replaced. A cache that
    cannot be written only costs time.

    Raises:
        DataError: offline (:func:`offline`, ``$EXTRACTBENCH_OFFLINE``), an entry exists
            but cannot be trusted (one line naming the file and why).
    """
    path = entry_path(name, key)
    value, problem = _check(path, name, key)
    if not problem and value is not None:
        return value
    with _deriving(path):  # one process derives an entry; the others wait, then read it
        value, problem = _check(path, name, key)
        if not problem and value is not None:
            return value
        return _derive(path, name, key, compute, problem)


@contextlib.contextmanager
def _deriving(path: Path) -> Iterator[None]:
    """Hold ``.<entry>.deriving`` beside the entry (``fcntl.flock``, released by the kernel
    when the holder dies): xdist workers collecting at once derive an entry once, not once
    each. A folder that cannot hold the file only costs the shared work."""
    import fcntl

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path.with_name(f".{path.name}.deriving"), "a")  # noqa: SIM115 - held below
    except OSError:
        yield
        return
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        handle.close()  # closing the file releases the lock


def _derive(path: Path, name: str, key: str, compute: Callable[[], Any], problem: str) -> Any:
    if problem and _is_offline():
        raise DataError(
            f"{path}: derived cache entry {problem}; delete the file, or run without "
            "--offline to rebuild it"
        )
    value = compute()
    entry = {"format": FORMAT, "name": name, "source": key, "sha256": value_digest(value),
             "value": value}  # fmt: skip
    try:
        atomic_write(path, json.dumps(entry, ensure_ascii=False))
        _sweep(path.parent)
    except OSError:  # a cache that cannot be written only costs time
        pass
    return value


def _sweep(folder: Path) -> None:
    """Delete temporary files of killed writers (older than :data:`STALE_TMP_S`)."""
    now = time.time()
    for tmp in folder.glob(".*.tmp"):
        try:
            if now - tmp.stat().st_mtime > STALE_TMP_S:
                tmp.unlink()
        except OSError:
            pass
