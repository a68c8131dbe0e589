"""Files: UTF-8 reads naming file and byte, paths kept inside the data dir, sha256 of a
file, and the one atomic write (temporary file in the same folder, then rename) that the
run record, reports, caches and fetched data all use."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from suites.item import DataError

__all__ = ["read_text", "decode", "inside", "sha256_of", "atomic_write", "cache_dir"]


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


def atomic_write(path: Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` through a temporary file in the same
    folder and a rename, creating the folder first: a reader sees the old file or the
    new one, never a part.

    Raises:
        OSError: the folder cannot be created or written (full disk, read-only folder);
            the temporary file is removed and ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def decode(data: bytes, where: str, offset: int = 0) -> str:
    """``data`` as UTF-8 text.

    Args:
        data: the bytes.
        where: ``file`` or ``file:line`` for the message.
        offset: byte offset of ``data`` in its file (the message gives the file's offset).

    Raises:
        DataError: ``{where}: not UTF-8 at byte N``.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{where}: not UTF-8 at byte {offset + exc.start}") from None


def read_text(path: Path) -> str:
    """The whole file as UTF-8 text.

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
        DataError: ``{where}: path {relative!r} is outside {root}``.
    """
    base = Path(root).resolve()
    path = (base / relative).resolve()
    if not path.is_relative_to(base):
        raise DataError(f"{where}: path {relative!r} is outside the data folder {base}")
    return path
