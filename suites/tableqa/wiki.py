"""The wiki subset's tables: WikiTableQuestions test tables, read from their HTML.

Source: the IDP team's Table-QA article (Habr, 2024), whose
Wikipedia tables are W 2-16 by H 1-64; data: ``tableqa/wtq/csv`` under the data dir
(docs/data.md#tableqa).
"""

from __future__ import annotations

from pathlib import Path

from extractbench.suites.files import data_file, read_text
from extractbench.suites.item import DataError, DataMissing
from extractbench.suites.links import docs_url
from extractbench.suites.tableqa.html import HTMLTableError, html_to_table
from extractbench.suites.tableqa.tables import Table

__all__ = [
    "WTQ_DIR",
    "MIN_WIDTH",
    "MAX_WIDTH",
    "MIN_HEIGHT",
    "MAX_HEIGHT",
    "wiki_html_files",
    "wiki_tables",
]

WTQ_DIR = "tableqa/wtq/csv"
MIN_WIDTH, MAX_WIDTH, MIN_HEIGHT, MAX_HEIGHT = 2, 16, 1, 64  # article's table sizes


def wiki_html_files(data_dir: Path) -> list[Path]:
    """The WikiTableQuestions HTML tables under ``data_dir``, sorted by path.

    Raises:
        DataMissing: the ``tableqa/wtq/csv`` folder holds no ``*/*.html``.
    """
    root = data_dir / WTQ_DIR
    files = [data_file(data_dir, p.relative_to(data_dir)) for p in sorted(root.glob("*/*.html"))]
    if not files:
        raise DataMissing(f"{root}/*/*.html not found (see {docs_url('docs/data.md#tableqa')})")
    return files


def wiki_tables(data_dir: Path, dropped: dict[str, list[str]] | None = None) -> list[Table]:
    """The WikiTableQuestions test tables, normalised from HTML, sized W 2-16 and H 1-64.

    Args:
        data_dir: the data folder.
        dropped: filled with the files left out: ``no_table`` (no ``<table>`` with rows)
            and ``size`` (outside the article's W 2-16, H 1-64).

    Raises:
        DataMissing: the ``tableqa/wtq/csv`` folder is absent.
        DataError: a file is not UTF-8, or its HTML is truncated or broken (unclosed
            ``<table>``, markup left in a cell); the message names the file.
    """
    dropped = dropped if dropped is not None else {}
    dropped.setdefault("no_table", [])
    dropped.setdefault("size", [])
    root = data_dir / WTQ_DIR
    tables = []
    for path in wiki_html_files(data_dir):
        try:
            table = html_to_table(read_text(path), str(path.relative_to(root).with_suffix("")))
        except HTMLTableError as exc:
            if exc.broken:
                raise DataError(f"{path}: {exc}") from None
            dropped["no_table"].append(str(path.relative_to(root)))
            continue
        if MIN_WIDTH <= table.width <= MAX_WIDTH and MIN_HEIGHT <= table.height <= MAX_HEIGHT:
            tables.append(table)
        else:
            dropped["size"].append(str(path.relative_to(root)))
    return tables
