"""Data files are checked against the manifest's sha256 when a run uses them.

A file of the user data cache or of a data folder that was truncated or edited after it
was fetched (a full disk, an editor, a half-finished copy) would otherwise be measured as
if it were the benchmark's: :func:`verify_suite_data` refuses it with one line naming the
file, the digest the manifest pins and the fix, before the suite reads it (also under
``--offline``).

Hashing 25 MB on every run and in every xdist worker would cost seconds, so the digest of
each file is remembered (:class:`DigestMemo`, SQLite beside the data cache) with the
file's size, mtime, ctime, inode and device: while none of them changed the file was not
written (ctime cannot be set back by a user, unlike mtime), and only a changed file is
hashed again. A file touched in the last 2 seconds is not remembered (a write within the
same timestamp tick would go unseen, the "racy git" problem).
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from extractbench.suites.datasets.cache import data_cache_dir, data_cache_root
from extractbench.suites.datasets.manifest import Manifest, load_manifest
from extractbench.suites.files import RACY_NS as _RACY_NS
from extractbench.suites.files import sha256_of, stat_stamp
from extractbench.suites.item import DataError, DataMissing

__all__ = [
    "DataChanged", "DigestMemo", "MEMO_FILE", "Problem", "check_suite_files",
    "verify_suite_data", "fix_hint",
]  # fmt: skip

MEMO_FILE = "verified.sqlite"
RACY_NS = _RACY_NS  # files changed this recently are hashed again next time
_SCHEMA = """CREATE TABLE IF NOT EXISTS digests (
    path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, ctime_ns INTEGER,
    inode INTEGER, device INTEGER, sha256 TEXT NOT NULL)"""


class DataChanged(DataError):
    """A data file's bytes are not those the manifest pins (truncated or edited).

    Attributes:
        path: the file.
        expected: the manifest's sha256.
        found: the file's sha256.
    """

    def __init__(self, message: str, path: Path, expected: str, found: str) -> None:
        super().__init__(message)
        self.path, self.expected, self.found = path, expected, found


class DigestMemo:
    """path -> sha256 of a file's bytes, trusted while its stat stamp (size, mtime, ctime,
    inode, device) stays.

    Args:
        db: the SQLite file (``<data cache>/verified.sqlite`` by default); one that
            cannot be opened or written leaves the memo in memory only (every file is
            then hashed once per process: slower, never wrong).

    Attributes:
        hashed: files read whole by this object; ``remembered``: files answered from the
            memo (for measurements and tests).
    """

    def __init__(self, db: Path | None = None) -> None:
        self.db_path = Path(db) if db is not None else data_cache_root() / MEMO_FILE
        self._rows: dict[str, tuple[tuple[int, ...], str]] = {}
        self._new: dict[str, tuple[tuple[int, ...], str]] = {}
        self.hashed = 0
        self.remembered = 0
        self._db: sqlite3.Connection | None = None
        self._opened = False  # on first use: a run of no manifest suite creates nothing
        self._loaded: set[str] = set()  # folders whose rows were read

    def _open(self) -> None:
        self._opened = True
        try:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.db_path, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # a memo lost in a crash: rehash
            self._db.execute(_SCHEMA)
        except (OSError, sqlite3.Error):
            if self._db is not None:
                self._db.close()
            self._db = None

    def sha256(self, path: Path) -> str:
        """Hex sha256 of ``path``'s bytes: from the memo when its stamp is unchanged,
        else read whole (and remembered, unless it changed in the last 2 s).

        Raises:
            OSError: the file cannot be read.
        """
        if not self._opened:
            self._open()
        key = os.path.abspath(path)
        stamp = stat_stamp(os.stat(key))
        known = self._new.get(key) or self._rows.get(key) or self._lookup(key)
        if known is not None and known[0] == stamp:
            self.remembered += 1
            return known[1]
        sha = sha256_of(Path(key))
        self.hashed += 1
        after = os.stat(key)
        if stat_stamp(after) == stamp and time.time_ns() - max(stamp[1], stamp[2]) > RACY_NS:
            self._new[key] = (stamp, sha)
        return sha

    def _lookup(self, key: str) -> tuple[tuple[int, ...], str] | None:
        """The memo's row for ``key``: the rows under its folder are read in one query
        the first time (the memo may hold many folders; a suite reads few)."""
        folder = os.path.dirname(key)
        if self._db is None or folder in self._loaded:
            return None
        self._loaded.add(folder)
        try:
            rows = self._db.execute(
                "SELECT * FROM digests WHERE path > ? AND path < ?", (folder + "/", folder + "0")
            ).fetchall()  # "0" follows "/": every path under the folder
        except sqlite3.Error:
            return None
        for path, *stamp, sha in rows:
            self._rows.setdefault(path, (tuple(stamp), sha))
        return self._rows.get(key)

    def save(self) -> None:
        """Write the digests learnt since the last save (one transaction); a memo that
        cannot be written is left as it was."""
        if self._db is None or not self._new:
            self._rows.update(self._new)
            self._new.clear()
            return
        try:
            with self._db:  # one transaction
                self._db.execute("BEGIN")
                self._db.executemany(
                    "INSERT OR REPLACE INTO digests VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(p, *stamp, sha) for p, (stamp, sha) in self._new.items()],
                )
        except sqlite3.Error:
            pass
        self._rows.update(self._new)
        self._new.clear()

    def close(self) -> None:
        """Save and close."""
        self.save()
        if self._db is not None:
            self._db.close()
            self._db = None


def fix_hint(folder: Path, suite: str, manifest: Manifest) -> str:
    """How to get the pinned bytes back: fetch again into the user cache, or restore the
    file in a folder the user gave (where a fetch into it is also offered)."""
    if Path(folder).resolve() == data_cache_dir(manifest).resolve():
        return f"fetch it again: `extractbench data fetch {suite}`"
    return (
        f"restore it from your copy, or fetch a verified one with `extractbench data fetch "
        f"{suite} --dest {folder}`"
    )


@dataclass(frozen=True)
class Problem:
    """A manifest file of a data folder that is missing or not the manifest's.

    Attributes:
        path: the file; ``missing``: absent (else its bytes differ);
        line: one line naming the file, the manifest's sha256 and size, what was found
            and the fix; ``expected``/``found``: the sha256s (``found`` is empty when
            the file is missing or of another size: not hashed).
    """

    path: Path
    missing: bool
    line: str
    expected: str
    found: str = ""

    def error(self, more: int = 0) -> DataError:
        """The error to raise: :class:`DataMissing` or :class:`DataChanged`, naming
        ``more`` further problems in the same line."""
        line = self.line + (f" (and {more} more file{'s' * (more > 1)})" if more else "")
        if self.missing:
            return DataMissing(line)
        return DataChanged(line, self.path, self.expected, self.found)


def check_suite_files(
    folder: Path, suite: str, manifest: Manifest, memo: DigestMemo
) -> list[Problem]:
    """Every file the manifest lists for ``suite``, checked in ``folder`` (size, then
    sha256 through ``memo``); the problems, in path order.

    Raises:
        DataError: a file is there but cannot be read (``path: reason``).
    """
    problems = []
    for rel, entry in sorted(manifest.suites.get(suite, {}).items()):
        path = Path(folder) / rel
        try:
            size = path.stat().st_size
            found = memo.sha256(path) if size == entry.size else ""
        except FileNotFoundError:
            line = (
                f"{path}: missing (the data manifest lists it); {fix_hint(folder, suite, manifest)}"
            )
            problems.append(Problem(path, True, line, entry.sha256))
            continue
        except OSError as exc:
            raise DataError(f"{path}: {exc.strerror or exc}") from None
        if found == entry.sha256:
            continue
        line = (
            f"{path}: not the file the data manifest pins (sha256 {entry.sha256}, "
            f"{entry.size:,} bytes; found {size:,} bytes"
            + (f", sha256 {found}" if found else "")
            + f"): truncated or edited; {fix_hint(folder, suite, manifest)}"
        )
        problems.append(Problem(path, False, line, entry.sha256, found))
    return problems


def verify_suite_data(
    folder: Path,
    suite: str,
    *,
    manifest: Manifest | None = None,
    memo: DigestMemo | None = None,
    allow_changed: bool = False,
) -> list[str]:
    """Check the files the manifest lists for ``suite`` in ``folder`` before a run reads
    them: each must be there with the manifest's size and sha256.

    Args:
        folder: the data folder (the user cache, ``--data-dir``, ``$EXTRACTBENCH_DATA``).
        suite: the suite; one the manifest does not list (a third-party suite) has
            nothing to check.
        manifest: default the packaged one.
        memo: default a :class:`DigestMemo` beside the data cache (saved on return).
        allow_changed: return the problems instead of raising (a run on the user's own
            copy of the data, which its record then names).

    Returns:
        One line per missing or changed file (empty: every file verified).

    Raises:
        DataChanged: a file differs (truncated, edited): one line naming it, the
            manifest's sha256 and size, what was found, and the fix.
        DataMissing: a file is absent (one line naming it and the fix).
        DataError: a file cannot be read.
    """
    manifest = manifest or load_manifest()
    own = memo is None
    memo = memo or DigestMemo()
    try:
        problems = check_suite_files(folder, suite, manifest, memo)
    finally:
        if own:
            memo.close()
        else:
            memo.save()
    if problems and not allow_changed:
        raise problems[0].error(len(problems) - 1)
    return [p.line for p in problems]
