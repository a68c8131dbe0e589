"""Files: UTF-8 reads naming file and byte, paths kept inside the data dir, sha256 of a
file, and the one atomic write (temporary file in the same folder, fsync, rename, fsync of
the folder) that the run record, reports, caches and fetched data all use; reports go
through :func:`write_output`, which also holds the path's lock (:mod:`suites.locks`)."""

from __future__ import annotations

import codecs
import errno
import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from extractbench.suites.item import DataError, DataMissing
from extractbench.suites.links import docs_url
from extractbench.suites.locks import PathLock, held_here
from extractbench.suites.suite_options import UserFileOptions

__all__ = [
    "read_text", "decode", "inside", "sha256_of", "atomic_write", "write_output", "fsync_folder",
    "cache_dir", "data_file", "data_folder", "path_kind", "NotARegularFile", "UserFiles", "distinct_ids",
    "stat_stamp", "RACY_NS",
]  # fmt: skip

# The process's umask, read once at import (in the main thread): files written here get
# the permissions open() would give them, not mkstemp's 0600.
_UMASK = os.umask(0o022)
os.umask(_UMASK)


class NotARegularFile(OSError):
    """A write would rename a file over something that is not a regular file (a device, a
    FIFO, a socket, a folder): refused, the path left as it is."""


_KINDS = (
    (stat.S_ISREG, "file"),
    (stat.S_ISDIR, "folder"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISFIFO, "FIFO (named pipe)"),
    (stat.S_ISSOCK, "socket"),
)


def path_kind(path: Path) -> str | None:
    """What ``path`` names, links followed: ``file``, ``folder``, ``character device``,
    ``block device``, ``FIFO (named pipe)``, ``socket``; None when nothing is there (or it
    cannot be looked at: a folder above it is a file, a dangling link)."""
    try:
        mode = os.stat(Path(path).expanduser()).st_mode
    except (OSError, ValueError):
        return None
    return next((name for test, name in _KINDS if test(mode)), "special file")


def cache_dir() -> Path:
    """The user cache folder: ``$XDG_CACHE_HOME/extractbench`` or ``~/.cache/extractbench``
    (the default model, derived data files, a built llama-server)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "extractbench"


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file's bytes, read in 1 MiB blocks.

    Raises:
        OSError: the file cannot be read.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


# A file changed this recently is hashed again next time: a write within the same timestamp
# tick as the hash would leave its stamp unchanged (the "racy git" problem).
RACY_NS = 2_000_000_000


def stat_stamp(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """The stamp a remembered digest is trusted under: (size, mtime_ns, ctime_ns, inode,
    device). While none of them changed the file was not written in place nor replaced:
    mtime can be set back by anyone (``touch -r``, ``cp -p``, ``tar -x``), ctime cannot
    (the kernel sets it on every write and every change of mtime), and a file renamed over
    it has another inode."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def atomic_write(path: Path, data: str | bytes, *, staging: Path | None = None) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary file, ``fsync`` of
    the file, a rename and ``fsync`` of the folder, creating the folder first: a reader
    sees the old file or the new one, never a part, also after a power cut.

    Args:
        path: where the file goes.
        data: its bytes (``str``: UTF-8).
        staging: the folder of the temporary file (same file system as ``path``);
            default ``path``'s folder, where a process killed by SIGKILL leaves
            ``.NAME.*.tmp`` (fetched data uses its own staging folder instead).

    Raises:
        NotARegularFile: something other than a regular file is at ``path`` (a rename
            would replace a device, a FIFO, a socket or a folder); nothing is written.
        OSError: the folder cannot be created or written (full disk, read-only folder);
            the temporary file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    kind = path_kind(path)
    if kind not in (None, "file"):
        raise NotARegularFile(errno.EINVAL, f"is a {kind}, not a regular file")
    path.parent.mkdir(parents=True, exist_ok=True)
    where = path.parent if staging is None else Path(staging)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=where)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fchmod(fh.fileno(), 0o666 & ~_UMASK)
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_folder(path.parent)
    return path


def fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable; a file system that cannot sync a folder
    (some network ones) is left as it is."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_output(path: Path, data: str | bytes) -> Path:
    """Write a report (run record, JUnit, HTML, markdown, export) with :func:`atomic_write`,
    under the path's lock: held since the run's start (:class:`suites.locks.OutputLocks`),
    else taken for this write. A character device (``/dev/null``, ``/dev/stdout``,
    ``/dev/full``) is written in place, without a lock: a rename would replace the device
    with a regular file.

    Raises:
        suites.locks.OutputBusy: another extractbench run holds the path's lock (one
            line naming the path and its pid); nothing is written.
        NotARegularFile: ``path`` is a FIFO, a socket, a block device or a folder.
        OSError: the file cannot be written (as :func:`atomic_write`; a device that
            refuses the bytes: ``/dev/full``'s "No space left on device").
    """
    if path_kind(path) == "character device":
        with open(path, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        return path
    if held_here(path):
        return atomic_write(path, data)
    with PathLock(path):
        return atomic_write(path, data)


def decode(data: bytes, where: str, offset: int = 0) -> str:
    """``data`` as UTF-8 text; a byte-order mark at the start of the file (``offset`` 0)
    is dropped, as ``utf-8-sig`` does (spreadsheet programs write one before CSV headers).

    Args:
        data: the bytes.
        where: ``file`` or ``file:line`` for the message.
        offset: byte offset of ``data`` in its file (the message gives the file's offset).

    Raises:
        DataError: ``{where}: not UTF-8 at byte N``.
    """
    skip = len(codecs.BOM_UTF8) if offset == 0 and data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{where}: not UTF-8 at byte {offset + skip + exc.start}") from None


def read_text(path: Path) -> str:
    """The whole file as UTF-8 text (a leading byte-order mark dropped, see :func:`decode`).

    Raises:
        DataError: the file cannot be read (``file: reason``) or is not UTF-8
            (``file: not UTF-8 at byte N``).
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: {exc.strerror or exc}") from None
    return decode(data, str(path))


def inside(root: Path, relative: str, where: str) -> Path:
    """``root / relative``, refusing a path that leaves ``root`` (absolute, ``..``, links).

    Raises:
        DataError: ``{where}: path {relative!r} is outside the data folder {root} (it
            resolves to TARGET)``.
    """
    base = Path(root).resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        raise DataError(
            f"{where}: path {relative!r} is outside the data folder {base} (it resolves to "
            f"{path}); data files must lie in the data folder"
        )
    return path


def data_folder(data_dir: Path | None, suite: str) -> Path:
    """``data_dir``, for a suite's loader about to read the data folder. A loader is given
    None where no data folder was found (:class:`suites.protocol.Suite`'s ``load``); the
    harness refuses such a run before loading a suite that reads local data, so None
    reaches here from a direct call.

    Raises:
        DataMissing: ``data_dir`` is None (one line naming the suite's data section).
    """
    if data_dir is None:
        raise DataMissing(f"{suite}: no data folder (see {docs_url(f'docs/data.md#{suite}')})")
    return data_dir


def data_file(root: Path, relative: str | Path) -> Path:
    """``root / relative`` for a file a suite reads, refused as :func:`inside` refuses a
    document when it, or a folder above it, is a link leading out of ``root``. The path
    is returned as laid out (not resolved), so messages name what the user sees.

    Raises:
        DataError: the file resolves outside ``root`` (one line naming it).
    """
    path = Path(root) / relative
    inside(root, str(relative), str(path))
    return path


@dataclass(frozen=True)
class UserFiles:
    """Where a suite may read the user's files from, and how large they may be: a suite's
    :class:`suites.suite_options.UserFileOptions` applied to one folder.

    Attributes:
        folder: the folder relative names are read from (the file or option naming them).
        root: the folder the files must lie in (resolved when checked): ``folder``, or a
            wider one the user names.
        suite: the suite's name, for the messages' ``--suite-option SUITE.KEY=...``.
        max_file_bytes: the largest file read.
        max_line_bytes: the longest JSON Lines line.
    """

    folder: Path
    root: Path
    suite: str
    max_file_bytes: int
    max_line_bytes: int

    @classmethod
    def of(cls, options: UserFileOptions, suite: str, folder: Path) -> UserFiles:
        """The limits of ``options`` for files named in ``folder`` (which must hold them, or
        the wider ``options.root`` the user gave)."""
        return cls(
            Path(folder),
            options.root.expanduser() if options.root is not None else Path(folder),
            suite,
            int(options.max_file_mb * 1e6),
            int(options.max_line_mb * 1e6),
        )

    def path(self, name: str | Path, where: str) -> Path:
        """``name`` (relative to :attr:`folder`, or absolute) as laid out, once it is
        known to resolve inside :attr:`root`, links and ``..`` followed.

        Raises:
            DataError: ``{where}: {name!r} is outside ROOT (it resolves to TARGET); ...``
                naming ``SUITE.root`` as the way to allow a wider folder.
        """
        base = self.root.resolve()
        path = self.folder / name
        target = path.resolve()
        if not target.is_relative_to(base):
            raise DataError(
                f"{where}: {str(name)!r} is outside {base} (it resolves to {target}); your "
                f"files must lie in that folder, or name a wider one with --suite-option "
                f"{self.suite}.root=DIR"
            )
        return path

    def check_size(self, path: Path) -> None:
        """Raises DataError when the file ``path`` is larger than :attr:`max_file_bytes`
        (one line naming the limit and ``SUITE.max_file_mb``); an unreadable file is left
        to the reader's own message."""
        try:
            size = os.stat(path).st_size
        except OSError:
            return
        if size > self.max_file_bytes:
            raise DataError(
                f"{path}: {size / 1e6:,.1f} MB, over the limit of {self.max_file_bytes / 1e6:g} "
                f"MB for one of your files; raise it with --suite-option "
                f"{self.suite}.max_file_mb=N"
            )

    def read_text(self, name: str | Path, where: str) -> str:
        """The text of the user's file ``name`` (:meth:`path`, :meth:`check_size`, then
        :func:`read_text`).

        Raises:
            DataError: outside the folder, too large, unreadable or not UTF-8.
        """
        path = self.path(name, where)
        self.check_size(path)
        return read_text(path)


def distinct_ids(named: list[tuple[str, Path]], where: str, root: Path) -> None:
    """Check that the ids made from the user's file names are distinct (``a.csv`` and
    ``a.html``, ``b report.md`` and ``b_report.txt`` both become one id).

    Args:
        named: (id, file) pairs.
        where: the option that named the folder (``tableqa.tables=DIR``).
        root: the folder the files are shown relative to.

    Raises:
        DataError: ``{where}: FILE and OTHER both become the id 'ID'; rename one``.
    """
    seen: dict[str, Path] = {}
    for name, path in named:
        if name in seen:
            first, second = (p.relative_to(root).as_posix() for p in (seen[name], path))
            raise DataError(
                f"{where}: {first} and {second} both become the id {name!r}; rename one"
            )
        seen[name] = path
