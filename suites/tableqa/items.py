"""Table-QA items: the wiki and syn1-syn5 lookup questions as prompts (the article's protocol).

Source: the IDP team's Table-QA article (Habr, 2024);
data: ``tableqa/`` under the data dir (docs/data.md#tableqa). The subsets' questions:
:mod:`suites.tableqa.subsets`; TableBench: :mod:`suites.tablebench`.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from extractbench.suites.files import data_folder
from extractbench.suites.item import DataError, Item, LazyText, SuiteData
from extractbench.suites.protocol import Loader
from extractbench.suites.suite_options import dump_options
from extractbench.suites.tableqa import synthetic
from extractbench.suites.tableqa.metrics import MATCH_METRICS
from extractbench.suites.tableqa.prompts import SYSTEM_PROMPTS, prompt_prefix
from extractbench.suites.tableqa.questions import FILTER_RULES, TEMPLATES
from extractbench.suites.tableqa.subsets import LOOKUP_SUBSETS, SubsetQuestions, subset_questions
from extractbench.suites.tableqa.suite import TableQAOptions
from extractbench.suites.tableqa.tables import to_markdown

__all__ = ["load_items"]

DEFAULTS = TableQAOptions()  # the suite's options when a caller gives none

MAX_TOKENS = 32
STOP = ("\n",)


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


def _lookup_items(
    subset: str, built: SubsetQuestions, opts: TableQAOptions = DEFAULTS
) -> list[Item]:
    by_name = {t.name: t for t in built.tables}
    prefixes: dict[str, str | LazyText] = {}
    items = []
    language = opts.language
    frame = len(prompt_prefix("", language))
    for qu in built.questions:
        table = by_name.get(qu.table)
        if table is not None:
            header, height = table.header, table.height
            if qu.table not in prefixes:
                prefixes[qu.table] = prompt_prefix(to_markdown(table), language)
        else:  # a synthetic table: built from its spec when its prompt is first read
            spec = built.specs[qu.table]
            header, height = spec.header, spec.height
            if qu.table not in prefixes:
                prefixes[qu.table] = LazyText(
                    partial(_synthetic_prefix, subset, spec, qu.table, language),
                    frame + spec.markdown_chars,
                    f"tableqa/{subset}/{qu.table} prompt",
                )
        group = f"tableqa/{subset}/{qu.table}"
        items.append(
            Item(
                id=f"{group}/r{qu.row}/t{qu.t}q{qu.q}",
                group=group,
                prefix=prefixes[qu.table],
                suffix=qu.text(header, language) + opts.answer_cue,
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
                stop_after_content=not opts.answer_cue,  # no cue: a model may start with \n
            )
        )
    return items


def _user_items(opts: TableQAOptions = DEFAULTS) -> SuiteData:
    """The questions over the user's tables (``tableqa.tables``), as subset ``user``."""
    from extractbench.suites.tableqa.user_tables import SUBSET, user_questions

    assert opts.tables is not None  # the caller's choice: the user's tables
    built, note = user_questions(opts.tables, opts.per_cell, opts.seed, opts)
    items = _lookup_items(SUBSET, built, opts)
    notes = {
        "source": "IDP team Table-QA article (Habr, 2024): its lookup questions on the "
        "user's tables (tableqa.tables), exact match",
        "options": dump_options(opts),
        "template": TEMPLATES[opts.language],
        "user_tables": note,
        "question_filters": {SUBSET: built.filters},
        "question_filter_rules": FILTER_RULES,
        "questions_per_subset": {SUBSET: len(items)},
    }
    return SuiteData(items=items, notes=notes)


def load_items(data_dir: Path | None, opts: TableQAOptions = DEFAULTS) -> SuiteData:
    """Lookup questions over wiki tables and syn1-syn5 (the article's protocol), or over
    the user's tables (``opts.tables``).

    Raises:
        DataMissing: the WikiTableQuestions tables are absent.
        DataError: with ``tableqa.tables``, a bad folder or table
            (:func:`suites.tableqa.user_tables.user_questions`).
    """
    if opts.tables is not None:
        return _user_items(opts)
    data_dir = data_folder(data_dir, "tableqa")
    items = []
    dropped: dict[str, list[str]] = {}
    filters: dict[str, dict[str, Any] | None] = {}
    agreement: dict[str, int] | None = None
    for subset in LOOKUP_SUBSETS:
        built = subset_questions(subset, data_dir, opts)
        filters[subset] = built.filters
        agreement = built.csv_agreement or agreement
        dropped.update(built.dropped)
        items += _lookup_items(subset, built, opts)
    notes = {
        "source": "IDP team Table-QA article (Habr, 2024): wiki + syn1-syn5, exact match",
        "options": dump_options(opts),
        "template": TEMPLATES[opts.language],
        "answer_cue": f"the question is followed by {opts.answer_cue!r} for completion models "
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
        "question_filter_rules": FILTER_RULES,
        "wiki_cell_text": "visible text of each cell: no separator inserted at tag boundaries, "
        "<br> as a space, hidden sort keys left out, footnote markers kept",
        "wiki_cell_text_vs_wtq_csv": agreement,
        "match": "exact_match is the article's metric (strict: the trimmed answer equals the cell); "
        "exact_match_normalized folds case and strips quotes and a final period; "
        f"the results table and heatmaps show {MATCH_METRICS[opts.match]}",
        "questions_per_subset": {
            s: sum(1 for it in items if it.meta["subset"] == s) for s in LOOKUP_SUBSETS
        },
    }
    return SuiteData(items=items, notes=notes)


# the suite declares this loader by name (suites.protocol.lazy): its type is checked here
LOADER: Loader[TableQAOptions] = load_items
