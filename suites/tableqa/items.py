"""Table-QA items: wiki and syn1-syn5 lookup questions (TableBench's: :mod:`suites.tableqa.tablebench_items`).

Source: the IDP team's Table-QA article (../shared/papers/003_63037db8327e6a22.txt);
data: ``tableqa/`` under the data dir (SOURCES.md section 3).
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Mapping
from dataclasses import asdict, astuple
from functools import lru_cache, partial
from importlib import metadata
from pathlib import Path
from typing import Any, NamedTuple

from suites.derived_cache import cached_json, digest_of
from suites.files import read_text
from suites.item import DataError, DataMissing, Item, LazyText, SuiteData
from suites.options import parse_options
from suites.tableqa import synthetic
from suites.tableqa.html import HTMLTableError, html_to_table
from suites.tableqa.metrics import MATCH_METRICS
from suites.tableqa.prompts import SYSTEM_PROMPTS, prompt_prefix
from suites.tableqa.questions import TEMPLATES, Question, filter_counts, sample_questions
from suites.tableqa.suite import TableQAOptions
from suites.tableqa.tables import Table, to_markdown
from suites.tableqa.wtq_csv import csv_agreement

__all__ = [
    "LOOKUP_SUBSETS",
    "wiki_tables",
    "load_items",
]

WTQ_DIR = "tableqa/wtq/csv"
LOOKUP_SUBSETS = ("wiki", *synthetic.SUBSETS)
MIN_WIDTH, MAX_WIDTH, MIN_HEIGHT, MAX_HEIGHT = 2, 16, 1, 64  # article's table sizes
MAX_TOKENS = 32
STOP = ("\n",)
CACHE_VERSION = "tableqa-questions-v4"  # bump when table parsing or wiki sampling changes


def _options(options: TableQAOptions | Mapping[str, Any] | None) -> dict[str, Any]:
    return asdict(parse_options("tableqa", TableQAOptions, options))


def _table_to_json(table: Table) -> list[Any]:
    return [table.name, list(table.header), [list(r) for r in table.rows]]


def _table_from_json(data: list[Any]) -> Table:
    name, header, rows = data
    return Table(name, tuple(header), tuple(tuple(r) for r in rows))


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
    files = sorted(root.glob("*/*.html"))
    if not files:
        raise DataMissing(f"{root}/*/*.html not found (see ../shared/data/SOURCES.md section 3)")
    tables = []
    for path in files:
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


def subset_questions(subset: str, data_dir: Path, opts: dict[str, Any]) -> SubsetQuestions:
    """One subset's :class:`SubsetQuestions`, cached in the user cache.

    The cache key covers the subset, the options that change the sample, the Faker
    version (synthetic values) and, for wiki, the HTML files' contents.
    """
    key = [
        CACHE_VERSION,
        subset,
        str(opts["per_cell"]),
        str(opts["seed"]),
    ]
    if subset == "wiki":
        root = data_dir / WTQ_DIR
        files = sorted(root.glob("*/*.html"))
        if not files:
            raise DataMissing(
                f"{root}/*/*.html not found (see ../shared/data/SOURCES.md section 3)"
            )
        key += [p.read_bytes() for p in files]  # type: ignore[misc]
    else:  # the generator's code and Faker's data make the tables
        key += [metadata.version("faker"), inspect.getsource(synthetic)]

    dropped: dict[str, list[str]] = {}

    def build() -> dict[str, Any]:
        if subset != "wiki":
            questions, specs = synthetic.sample_questions(
                subset, opts["per_cell"], opts["seed"], range(MIN_WIDTH, MAX_WIDTH + 1), MAX_HEIGHT
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
        questions = sample_questions(tables, opts["per_cell"], opts["seed"], MAX_WIDTH, MAX_HEIGHT)
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


@lru_cache(maxsize=16)
def _synthetic_prefix(subset: str, spec: synthetic.TableSpec, name: str, language: str) -> str:
    """The prompt prefix of a synthetic question, its table regenerated from ``spec``.

    Raises:
        DataError: the regenerated table differs from the one the question was drawn from
            (its answer would not be in the prompt).
    """
    markdown = to_markdown(synthetic.generate(subset, spec.width, spec.height, spec.seed, name))
    if hashlib.sha256(markdown.encode("utf-8")).hexdigest() != spec.markdown_sha256:
        raise DataError(
            f"tableqa/{subset}/{name}: the table regenerated differently from when its question "
            "was built (another generator or Faker version); clear the derived cache"
        )
    return prompt_prefix(markdown, language)


def _lookup_items(subset: str, built: SubsetQuestions, opts: dict[str, Any]) -> list[Item]:
    by_name = {t.name: t for t in built.tables}
    prefixes: dict[str, str | LazyText] = {}
    items = []
    language = opts["language"]
    frame = len(prompt_prefix("", language))
    for qu in built.questions:
        table = by_name.get(qu.table)
        spec = built.specs.get(qu.table)
        if qu.table not in prefixes:
            prefixes[qu.table] = (
                prompt_prefix(to_markdown(table), language)
                if table is not None
                else LazyText(
                    partial(_synthetic_prefix, subset, spec, qu.table, language),
                    frame + spec.markdown_chars,
                    f"tableqa/{subset}/{qu.table} prompt",
                )
            )
        header = table.header if table is not None else spec.header
        height = table.height if table is not None else spec.height
        group = f"tableqa/{subset}/{qu.table}"
        items.append(
            Item(
                id=f"{group}/r{qu.row}/t{qu.t}q{qu.q}",
                group=group,
                prefix=prefixes[qu.table],
                suffix=qu.text(header, language) + opts["answer_cue"],
                reference=qu.answer,
                meta={
                    "subset": subset,
                    "width": qu.width,
                    "height": height,
                    "row": qu.row,
                    "distance": qu.distance,
                    "table": qu.table,
                },
                max_tokens=MAX_TOKENS,
                stop=STOP,
                system=SYSTEM_PROMPTS[language],  # the article's system prompt (chat models)
                stop_after_content=not opts["answer_cue"],  # no cue: a model may start with \n
            )
        )
    return items


def load_items(
    data_dir: Path, options: TableQAOptions | Mapping[str, Any] | None = None
) -> SuiteData:
    """Lookup questions over wiki tables and syn1-syn5 (the article's protocol).

    Options: :class:`suites.tableqa.suite.TableQAOptions`.

    Raises:
        DataMissing: the WikiTableQuestions tables are absent.
        DataError: a bad option value.
    """
    opts = _options(options)
    items = []
    dropped: dict[str, list[str]] = {}
    filters: dict[str, dict] = {}
    agreement: dict[str, int] | None = None
    for subset in LOOKUP_SUBSETS:
        built = subset_questions(subset, data_dir, opts)
        filters[subset] = built.filters
        agreement = built.csv_agreement or agreement
        dropped.update(built.dropped)
        items += _lookup_items(subset, built, opts)
    notes = {
        "source": "IDP team Table-QA article (Habr, 2024): wiki + syn1-syn5, exact match",
        "options": opts,
        "template": TEMPLATES[opts["language"]],
        "answer_cue": f"the question is followed by {opts['answer_cue']!r} for completion models "
        '(the article used chat models and no cue; tableqa.answer_cue="" gives its prompt exactly)',
        "missing_subsets": "gost (the article's technical-standard tables are not available)",
        "synthetic_tables": "one seeded table per question (9,600 per subset: widths 2-16, rows "
        "1-64, 10 each), its height drawn from [r, 64]; the article: 10,000 unique tables of "
        "heights 1-64",
        "wiki_tables": "WikiTableQuestions pristine-unseen test tables (substitute for the article's Wikipedia set)",
        "wiki_tables_dropped": {
            "no_table": dropped.get("no_table", []),
            "outside_size_range": len(dropped.get("size", [])),
        },
        "question_filters": {k: v for k, v in filters.items() if v is not None},
        "wiki_cell_text": "visible text of each cell: no separator inserted at tag boundaries, "
        "<br> as a space, hidden sort keys left out, footnote markers kept",
        "wiki_cell_text_vs_wtq_csv": agreement,
        "match": "exact_match is the article's metric (strict: the trimmed answer equals the cell); "
        "exact_match_normalized folds case and strips quotes and a final period; "
        f"the results table and heatmaps show {MATCH_METRICS[opts['match']]}",
        "questions_per_subset": {
            s: sum(1 for it in items if it.meta["subset"] == s) for s in LOOKUP_SUBSETS
        },
    }
    return SuiteData(items=items, notes=notes)
