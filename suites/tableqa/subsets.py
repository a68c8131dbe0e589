"""The lookup subsets (wiki, syn1-syn5) as built: sampled questions, cached in the user cache.

Source: the IDP team's Table-QA article (Habr, 2024);
data: ``tableqa/`` under the data dir (docs/data.md#tableqa).
"""

from __future__ import annotations

import inspect
from dataclasses import astuple
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from extractbench.suites.derived_cache import cached_json, digest_of
from extractbench.suites.tableqa import html, synthetic
from extractbench.suites.tableqa.questions import Question, filter_counts, sample_questions
from extractbench.suites.tableqa.tables import Table
from extractbench.suites.tableqa.wiki import (
    MAX_HEIGHT,
    MAX_WIDTH,
    MIN_WIDTH,
    WTQ_DIR,
    wiki_html_files,
    wiki_tables,
)
from extractbench.suites.tableqa.wtq_csv import csv_agreement

if TYPE_CHECKING:
    from extractbench.suites.tableqa.suite import TableQAOptions

__all__ = ["LOOKUP_SUBSETS", "SubsetQuestions", "subset_questions"]

LOOKUP_SUBSETS = ("wiki", *synthetic.SUBSETS)
CACHE_VERSION = "tableqa-questions-v5"  # bump when table parsing or wiki sampling changes


def _table_to_json(table: Table) -> list[Any]:
    merged = [[row, list(cols)] for row, cols in table.merged]
    return [table.name, list(table.header), [list(r) for r in table.rows], merged]


def _table_from_json(data: list[Any]) -> Table:
    name, header, rows, merged = data
    return Table(
        name,
        tuple(header),
        tuple(tuple(r) for r in rows),
        tuple((int(row), tuple(cols)) for row, cols in merged),
    )


class SubsetQuestions(NamedTuple):
    """One lookup subset as built: its sampled questions; the wiki tables (synthetic
    subsets: none, their tables are regenerated from ``specs`` when a prompt is read); the
    wiki files left out (``no_table``, ``size``), the question filter counts
    (:func:`suites.tableqa.questions.filter_counts`) and the cell-text agreement with
    WikiTableQuestions' CSVs (:func:`suites.tableqa.wtq_csv.csv_agreement`), each None or
    empty for synthetic subsets."""

    tables: list[Table]
    questions: list[Question]
    specs: dict[str, synthetic.TableSpec]
    dropped: dict[str, list[str]]
    filters: dict[str, Any] | None
    csv_agreement: dict[str, int] | None


def subset_questions(subset: str, data_dir: Path, opts: TableQAOptions) -> SubsetQuestions:
    """One subset's :class:`SubsetQuestions`, cached in the user cache.

    The cache key covers the subset, the options that change the sample, the Faker
    version (synthetic values) and, for wiki, the HTML files' contents and the code of the
    HTML table reader (a parsing change rebuilds the questions).
    """
    key = [
        CACHE_VERSION,
        subset,
        str(opts.per_cell),
        str(opts.seed),
    ]
    if subset == "wiki":
        key += [p.read_bytes() for p in wiki_html_files(data_dir)]
        key += [inspect.getsource(html)]
    else:  # the generator's code and Faker's data make the tables
        key += [metadata.version("faker"), inspect.getsource(synthetic)]

    dropped: dict[str, list[str]] = {}

    def build() -> dict[str, Any]:
        if subset != "wiki":
            questions, specs = synthetic.sample_questions(
                subset, opts.per_cell, opts.seed, range(MIN_WIDTH, MAX_WIDTH + 1), MAX_HEIGHT
            )
            return {
                "tables": [],
                "questions": [astuple(qu) for qu in questions],
                "specs": {name: list(spec) for name, spec in specs.items()},
                "dropped": {},
                "filters": None,
                "csv_agreement": None,
            }
        tables = wiki_tables(data_dir, dropped)
        questions = sample_questions(tables, opts.per_cell, opts.seed, MAX_WIDTH, MAX_HEIGHT)
        return {
            "tables": [_table_to_json(t) for t in tables],
            "questions": [astuple(qu) for qu in questions],
            "specs": {},
            "dropped": dropped,
            "filters": filter_counts(tables, MAX_WIDTH, MAX_HEIGHT),
            "csv_agreement": csv_agreement(tables, data_dir / WTQ_DIR),
        }

    data = cached_json(f"tableqa-{subset}", digest_of(key), build)
    specs = {
        name: synthetic.TableSpec(width, height, seed, tuple(header), chars, sha)
        for name, (width, height, seed, header, chars, sha) in data["specs"].items()
    }
    return SubsetQuestions(
        [_table_from_json(t) for t in data["tables"]],
        [Question(*q) for q in data["questions"]],
        specs,
        data["dropped"],
        data["filters"],
        data["csv_agreement"],
    )
