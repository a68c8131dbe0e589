"""TableBench items: the test questions with TableBench's DP prompts, from the local copy
or the hub release.

Source: TableBench (Wu et al. 2025); data: ``tableqa/tablebench/`` under the data dir
(docs/data.md#tablebench).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from extractbench.suites.files import data_file, data_folder
from extractbench.suites.item import DataError, DataMissing, Item, SuiteData
from extractbench.suites.links import docs_url, install_command
from extractbench.suites.protocol import Loader
from extractbench.suites.suite_options import dump_options
from extractbench.suites.tablebench import dp as tablebench
from extractbench.suites.tablebench.suite import TableBenchOptions

__all__ = ["load_tablebench", "tablebench_from_hub"]

DEFAULTS = TableBenchOptions()  # the suite's options when a caller gives none


def load_tablebench(data_dir: Path | None, opts: TableBenchOptions = DEFAULTS) -> SuiteData:
    """TableBench test questions (Visualization skipped) with TableBench's DP prompts.

    Raises:
        DataMissing: the TableBench files are absent.
        DataError: a malformed line, or a question subtype without an official template.
    """
    if opts.source == "hub":
        return tablebench_from_hub(opts)
    data_dir = data_folder(data_dir, "tablebench")
    test_path = data_file(data_dir, tablebench.TEST_FILE)
    examples_path = data_file(data_dir, tablebench.EXAMPLES_FILE)
    for path in (test_path, examples_path):
        if not path.is_file():
            raise DataMissing(f"{path} not found (see {docs_url('docs/data.md#tablebench')})")
    fields = ("id", "qtype", "qsubtype", "table", "question", "answer")
    templates = tablebench.dp_templates(
        read := tablebench.read_jsonl(examples_path, (*fields, "instruction"))
    )
    del read
    rows = tablebench.read_jsonl(test_path, fields)
    items = []
    skipped = 0
    seen: set[str] = set()
    duplicates = []
    for row in rows:
        if row["qtype"] in tablebench.SKIPPED_QTYPES:
            skipped += 1
            continue
        if row["id"] in seen:
            duplicates.append(row["id"])
            continue
        seen.add(row["id"])
        template = templates.get(row["qsubtype"])
        if template is None:
            raise DataError(
                f"{test_path}: no official DP template for qsubtype {row['qsubtype']!r}"
            )
        prompt = template.format(table=str(row["table"]), question=row["question"])
        items.append(_tablebench_item(row, prompt, opts.answer_cue))
    notes = {
        "source": "TableBench (Wu et al. 2025), DP prompts from the 54 official examples",
        "data": "third-party copy of the 886-question test set (version unknown; docs/data.md#tablebench)",
        "options": dump_options(opts),
        "skipped": f"{skipped} Visualization questions (chart code is scored by running it)",
        "duplicate_ids_skipped": duplicates,
    }
    return SuiteData(items=items, notes=notes)


# the suite declares this loader by name (suites.protocol.lazy): its type is checked here
LOADER: Loader[TableBenchOptions] = load_tablebench


def _tablebench_item(row: Mapping[str, Any], prompt: str, answer_cue: str) -> Item:
    return Item(
        id=f"tablebench/{row['qtype']}/{row['id']}",
        group=f"tablebench/{row['id']}",
        prefix=prompt,
        suffix=answer_cue,
        reference=str(row["answer"]),
        meta={"qtype": row["qtype"], "qsubtype": row["qsubtype"]},
        max_tokens=128 if row["qtype"] == "DataAnalysis" else 64,
        stop=("\n",) if answer_cue else (),
    )


def tablebench_from_hub(opts: TableBenchOptions = DEFAULTS) -> SuiteData:
    """TableBench's test set as released on the hub (the cleaned version), through the
    ``datasets`` library: the rows with ``instruction_type`` DP, their ``instruction``
    being the official DP prompt; Visualization skipped as for the local copy.

    Raises:
        DataError: ``datasets`` is not installed (the ``hub`` extra), the dataset cannot
            be loaded, or a row lacks a field.
    """
    try:
        import datasets
    except ImportError:
        raise DataError(
            f"tablebench.source=hub needs the datasets library: {install_command('hub')}"
        ) from None
    try:
        # a split's rows: plain records, each checked below
        rows = cast(Iterable[Mapping[str, Any]], datasets.load_dataset(opts.dataset, split=opts.split))
    except Exception as exc:  # hub unreachable, no such dataset or split
        raise DataError(
            f"tablebench.dataset={opts.dataset} ({opts.split}): cannot be loaded: {type(exc).__name__}: {exc}"
        ) from None
    items, skipped, seen = [], 0, set()
    fields = ("id", "qtype", "qsubtype", "question", "answer", "instruction", "instruction_type")
    for index, row in enumerate(rows):
        if any(row.get(f) is None for f in fields):
            raise DataError(f"{opts.dataset} row {index}: needs {', '.join(fields)}")
        if row["instruction_type"] != "DP" or row["id"] in seen:
            continue
        if row["qtype"] in tablebench.SKIPPED_QTYPES:
            skipped += 1
            continue
        seen.add(row["id"])
        items.append(_tablebench_item(row, str(row["instruction"]), opts.answer_cue))
    notes = {
        "source": "TableBench (Wu et al. 2025), hub release, DP instructions as released",
        "dataset": opts.dataset, "split": opts.split, "options": dump_options(opts),
        "skipped": f"{skipped} Visualization questions (chart code is scored by running it)",
    }  # fmt: skip
    return SuiteData(items=items, notes=notes)
