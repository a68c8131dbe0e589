"""WikiTableQuestions' own CSV of each table, to check our HTML cell text against it.

WikiTableQuestions (Pasupat & Liang 2015) ships every table twice, as the page's HTML and
as a CSV it extracted (README "CSV format": first row the header, ``\\"`` and ``\\\\``
escaped, newlines inside quoted cells). The Table-QA suite reads the HTML (the article's
source of structure); this module measures how often our cell text equals the CSV's.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from extractbench.suites.files import read_text
from extractbench.suites.tableqa.tables import Table

__all__ = ["read_wtq_csv", "aligned_cells", "csv_agreement"]

_FOOTNOTE = re.compile(r"\s*\[[^\]]*\]")


def read_wtq_csv(path: Path) -> list[list[str]]:
    """The rows of one WikiTableQuestions CSV (header first), escapes resolved.

    Raises:
        DataError: the file is not UTF-8 (from :func:`suites.files.read_text`).
    """
    text = read_text(path)
    return list(csv.reader(io.StringIO(text), escapechar="\\", doublequote=False))


def aligned_cells(tables: Sequence[Table], csv_root: Path) -> Iterator[tuple[Table, str, str]]:
    """``(table, our text, CSV text)`` for every data cell of the tables whose CSV has their
    shape (the same data-row count and width); whitespace collapsed in both texts."""
    for table in tables:
        data = read_wtq_csv(csv_root / f"{table.name}.csv")[1:]
        if len(data) != table.height or any(len(row) != table.width for row in data):
            continue
        for ours_row, csv_row in zip(table.rows, data, strict=True):
            for ours, theirs in zip(ours_row, csv_row, strict=True):
                yield table, " ".join(ours.split()), " ".join(theirs.split())


def csv_agreement(tables: Sequence[Table], csv_root: Path) -> dict[str, int]:
    """Compare the data cells of ``tables`` (named ``<dir>/<n>``) with their CSVs.

    Only tables whose CSV has their shape are compared cell by cell
    (:func:`aligned_cells`). Returns ``{"tables", "tables_same_shape", "cells_compared",
    "cells_equal", "cells_differing_by_footnote_markers"}``; equality is after whitespace
    normalisation; a footnote difference is one that removing bracketed markers
    (``[20]``, ``[citation needed]``) from our text resolves (the CSV drops them).
    """
    same: set[str] = set()
    compared = equal = footnote = 0
    for table, ours, theirs in aligned_cells(tables, csv_root):
        same.add(table.name)
        compared += 1
        if ours == theirs:
            equal += 1
        elif " ".join(_FOOTNOTE.sub("", ours).split()) == theirs:
            footnote += 1
    return {
        "tables": len(tables),
        "tables_same_shape": len(same),
        "cells_compared": compared,
        "cells_equal": equal,
        "cells_differing_by_footnote_markers": footnote,
    }
