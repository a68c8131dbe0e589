"""Reading JSON Lines data files with errors that name the file and line."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from extractbench.suites import safe_json
from extractbench.suites.files import decode
from extractbench.suites.item import DataError

__all__ = ["iter_jsonl", "check_fields"]


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}")
        seen[key] = value
    return seen


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield (line number, object) for each non-blank line of a JSONL file.

    Raises:
        DataError: a line is not UTF-8, not valid JSON, not a JSON object, or holds one
            key twice (``file:line: ...``).
    """
    offset = 0
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
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
