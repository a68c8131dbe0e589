"""Reading JSON Lines data files with errors that name the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from extractbench.suites import safe_json
from extractbench.suites.files import UserFiles, decode
from extractbench.suites.item import DataError

__all__ = ["iter_jsonl", "check_fields"]


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def iter_jsonl(path: Path, limits: UserFiles | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line of a JSONL file.

    Args:
        path: the file.
        limits: for a user's file, its size limits (the file's and each line's); None for
            the pinned data, whose bytes are verified against the manifest.

    Raises:
        DataError: a line is not UTF-8, not valid JSON, not a JSON object, or holds one
            key twice, or is longer than ``limits.max_line_bytes`` (``file:line: ...``,
            naming ``SUITE.max_line_mb``); the file is over ``limits.max_file_bytes``.
    """
    if limits is not None:
        limits.check_size(path)
    most = limits.max_line_bytes if limits is not None else -1
    offset = 0
    with path.open("rb") as fh:
        for lineno, raw in enumerate(
            iter(lambda: fh.readline(most + 1 if most >= 0 else -1), b""), start=1
        ):
            if limits is not None and len(raw) > most:
                raise DataError(
                    f"{path}:{lineno}: a line over the limit of {most / 1e6:g} MB; raise it "
                    f"with --suite-option {limits.suite}.max_line_mb=N"
                )
            line = decode(raw, f"{path}:{lineno}", offset)
            offset += len(raw)
            if not line.strip():
                continue
            try:
                row = safe_json.loads(line, object_pairs_hook=_no_duplicates)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
            except ValueError as exc:
                raise DataError(f"{path}:{lineno}: {exc}") from None
            if not isinstance(row, dict):
                raise DataError(f"{path}:{lineno}: expected a JSON object")
            yield lineno, row


def check_fields(
    row: dict[str, Any],
    where: str,
    required: Sequence[str],
    optional: Sequence[str] = (),
    strings: Sequence[str] = (),
) -> None:
    """Check the fields of one object of a user's JSONL file (``where``: ``file:line``): none
    outside ``required`` and ``optional``, every ``required`` one present, and each of
    ``strings`` that is present a string that is not blank.

    Raises:
        DataError: ``{where}: unknown field(s) ...``, ``missing field(s) ...`` or ``NAME must
            be a non-empty string``.
    """
    known = (*required, *optional)
    unknown = sorted(set(row) - set(known))
    if unknown:
        raise DataError(
            f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(known)})"
        )
    missing = [f for f in required if f not in row]
    if missing:
        raise DataError(f"{where}: missing field(s) {', '.join(missing)}")
    for name in strings:
        if name in row and (not isinstance(row[name], str) or not row[name].strip()):
            raise DataError(f"{where}: {name} must be a non-empty string")
