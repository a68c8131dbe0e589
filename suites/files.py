"""Reading data files: UTF-8 with the file and byte named, paths kept inside the data dir."""

from __future__ import annotations

from pathlib import Path

from suites.item import DataError

__all__ = ["read_text", "decode", "inside"]


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
