"""Table QA on a user's own tables (``tableqa.tables=DIR``): the article's lookup questions
drawn from every ``.csv`` and ``.html`` table under the folder, with the same uniqueness rule
and filters as the wiki subset (:mod:`suites.tableqa.questions`)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from extractbench.suites.derived_cache import digest_of
from extractbench.suites.files import UserFiles, distinct_ids, read_text
from extractbench.suites.item import DataError
from extractbench.suites.links import docs_url
from extractbench.suites.suite_options import UserFileOptions
from extractbench.suites.tableqa.html import HTMLTableError, html_to_table
from extractbench.suites.tableqa.questions import filter_counts, sample_questions
from extractbench.suites.tableqa.subsets import SubsetQuestions
from extractbench.suites.tableqa.tables import Table
from extractbench.suites.tableqa.wiki import MAX_HEIGHT, MAX_WIDTH, MIN_HEIGHT, MIN_WIDTH

__all__ = ["SUBSET", "read_table", "user_questions"]

SUBSET = "user"
SUFFIXES = (".csv", ".html", ".htm")


def read_table(path: Path, name: str) -> Table:
    """One table: a CSV file (first row the header, every row as wide as it) or the first
    ``<table>`` of an HTML file (spans filled as for the wiki tables).

    Raises:
        DataError: the file is not UTF-8, is empty, a CSV row's width differs from the
            header's (``file:line``), or the HTML holds no table or a broken one.
    """
    text = read_text(path)
    if path.suffix.lower() != ".csv":
        try:
            return html_to_table(text, name)
        except HTMLTableError as exc:
            raise DataError(f"{path}: {exc}") from None
    rows = [row for row in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in row)]
    if not rows:
        raise DataError(f"{path}: empty")
    header, body = rows[0], rows[1:]
    for lineno, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise DataError(f"{path}:{lineno}: {len(row)} cells, the header has {len(header)}")
    clean = lambda cells: tuple(" ".join(c.split()) for c in cells)  # noqa: E731
    return Table(name, clean(header), tuple(clean(row) for row in body))


def user_questions(
    folder_text: str | Path, per_cell: int, seed: int, opts: UserFileOptions | None = None
) -> tuple[SubsetQuestions, dict[str, Any]]:
    """The questions over the tables under ``folder_text`` and what the record says of them
    (folder, tables read, dropped by size, digest of names and bytes); ``opts``: where the
    tables may lie (``tableqa.root``) and how large one may be (``tableqa.max_file_mb``).

    Raises:
        DataError: no such folder, no table file, a table a link leads out of the folder
            or over its size limit, a bad table (:func:`read_table`), or no question (no
            table passes the size range and the uniqueness filters).
    """
    folder = Path(folder_text).expanduser()
    if not folder.is_dir():
        raise DataError(f"tableqa.tables={folder_text}: no such folder")
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
    if not files:
        raise DataError(f"tableqa.tables={folder_text}: no .csv or .html table in it")
    limits = UserFiles.of(opts or UserFileOptions(), "tableqa", folder)
    where = f"tableqa.tables={folder_text}"
    names = ["_".join(p.relative_to(folder).with_suffix("").as_posix().split()) for p in files]
    distinct_ids(list(zip(names, files, strict=True)), where, folder)
    tables, outside = [], []
    for path, name in zip(files, names, strict=True):
        limits.path(path.relative_to(folder), where)
        limits.check_size(path)
        table = read_table(path, name)
        if MIN_WIDTH <= table.width <= MAX_WIDTH and MIN_HEIGHT <= table.height <= MAX_HEIGHT:
            tables.append(table)
        else:
            outside.append(name)
    questions = sample_questions(tables, per_cell, seed, MAX_WIDTH, MAX_HEIGHT)
    if not questions:
        raise DataError(
            f"tableqa.tables={folder_text}: no question: no table of {MIN_WIDTH}-{MAX_WIDTH} "
            f"columns and {MIN_HEIGHT}-{MAX_HEIGHT} rows has a cell its row's other cells "
            f"identify uniquely ({docs_url('docs/suites/tableqa.md')})"
        )
    filters = filter_counts(tables, MAX_WIDTH, MAX_HEIGHT)
    built = SubsetQuestions(tables, questions, {}, {"size": outside}, filters, None)
    note = {
        "tables": str(folder.resolve()),
        "files": len(files),
        "outside_size_range": outside,
        "sha256": digest_of(part for p in files for part in (p.relative_to(folder).as_posix(), p.read_bytes())),
    }  # fmt: skip
    return built, note
