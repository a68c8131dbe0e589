"""Struc-Bench on a user's own (text, table) pairs (``strucbench.pairs=FILE``), one JSON object
per line::

    {"text": "Acme sold 5 units in May and 7 in June.", "table": "| month | units |\\n|---|---|\\n| May | 5 |\\n| June | 7 |", "format": "raw"}
    {"text": "...", "table": "<table><tr><th>a</th></tr><tr><td>1</td></tr></table>", "format": "html", "id": "t2"}

``format`` is ``raw`` (a markdown pipe table), ``html`` or ``latex`` (a ``tabular``), the gold
parsed by the scorer's own parser; ``id`` is optional. Items are built and scored as the
suite's own (prompt, H-Score, text metrics, P-Score)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from extractbench.suites.files import UserFiles
from extractbench.suites.item import DataError, Item
from extractbench.suites.jsonl import check_fields, iter_jsonl
from extractbench.suites.links import docs_url
from extractbench.suites.strucbench import render
from extractbench.suites.strucbench.pair_item import FORMATS, make_item
from extractbench.suites.strucbench.tables import PARSERS, TableParseError
from extractbench.suites.suite_options import UserFileOptions

__all__ = ["user_items"]


def _gold(fmt: str, table: str, where: str) -> render.GoldTable:
    try:
        parsed = PARSERS[fmt](table)
    except TableParseError as exc:
        raise DataError(f"{where}: table is not a {fmt} table: {exc}") from None
    if not parsed.header and not parsed.rows:
        raise DataError(f"{where}: table is empty")
    return render.GoldTable(
        parsed.header, parsed.rows, parsed.caption or "", parsed.alignment or ""
    )


def user_items(
    path_text: str | Path, max_cells: int, opts: UserFileOptions | None = None
) -> tuple[list[Item], dict[str, Any]]:
    """The items of the pairs file and what the record says of it (path, SHA-256, pairs
    read, pairs above ``max_cells`` left out by ``file:line``).

    Raises:
        DataError: no such file; ``file:line: ...`` for a line that is not a JSON object,
            lacks a field, has a field of the wrong type or an unknown one, an unknown
            format, a table its format's parser rejects, or a repeated id; the file or a
            line over ``strucbench.max_file_mb`` or ``max_line_mb``; ``file: no items`` for
            a file without any.
    """
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise DataError(f"strucbench.pairs={path_text}: no such file")
    items: list[Item] = []
    seen: dict[str, int] = {}
    left_out: list[str] = []
    rows = 0
    limits = UserFiles.of(opts or UserFileOptions(), "strucbench", path.parent)
    for lineno, row in iter_jsonl(path, limits):
        where = f"{path}:{lineno}"
        rows += 1
        check_fields(
            row, where, ("text", "table", "format"), ("id",), ("text", "table", "format", "id")
        )
        fmt = row["format"]
        if fmt not in FORMATS:
            raise DataError(f"{where}: format {fmt!r}: must be one of {', '.join(FORMATS)}")
        key = re.sub(r"[^A-Za-z0-9_.-]+", "_", row.get("id", f"line{lineno}"))
        if key in seen:
            raise DataError(f"{where}: duplicate id {row.get('id', key)!r} (line {seen[key]})")
        seen[key] = lineno
        gold = _gold(fmt, row["table"], where)
        if len(gold.header) * (len(gold.rows) + 1) > max_cells:
            left_out.append(where)
            continue
        try:
            items.append(make_item(fmt, "user", key, row["text"], gold, row["table"]))
        except DataError as exc:
            raise DataError(f"{where}: {exc}") from None
    if not rows:
        raise DataError(
            f"{path}: no items (one JSON object per line, see {docs_url('docs/suites/strucbench.md')})"
        )
    if not items:
        raise DataError(f"{path}: no item: every table has more than strucbench.max_cells="
                        f"{max_cells} cells")  # fmt: skip
    note = {
        "pairs": str(path.resolve()),
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "rows": rows,
        "left_out_max_cells": left_out,
    }
    return items, note
