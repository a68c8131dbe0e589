"""TableBench subset: official DP prompts recovered exactly, answer parsing, per-type metrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from extractbench.suites.tablebench import dp as tablebench
from extractbench.suites.text_metrics import rouge_l

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_data = pytest.mark.skipif(
    not (DATA / tablebench.EXAMPLES_FILE).is_file(), reason="no TableBench data"
)


@needs_data
def test_templates_rebuild_every_official_instruction_exactly():
    rows = tablebench.read_jsonl(
        DATA / tablebench.EXAMPLES_FILE, ("qsubtype", "instruction", "table", "question")
    )
    templates = tablebench.dp_templates(rows)
    for row in rows:
        assert (
            templates[row["qsubtype"]].format(table=str(row["table"]), question=row["question"])
            == row["instruction"]
        )


@needs_data
def test_tablebench_items_skip_visualization_and_duplicates():
    from extractbench.suites.tablebench.items import load_tablebench

    data = load_tablebench(DATA)
    qtypes = {it.meta["qtype"] for it in data.items}
    assert qtypes == {"FactChecking", "NumericalReasoning", "DataAnalysis"}
    assert len(data.items) == 886 - 50 - len(data.notes["duplicate_ids_skipped"])
    assert len({it.id for it in data.items}) == len(data.items)


def test_final_answer_takes_the_last_marker():
    assert tablebench.final_answer("thinking...\nFinal Answer: 12\nFinal Answer: 13") == "13"
    assert tablebench.final_answer("  no marker ") == "no marker"


def test_rouge_l_bounds():
    assert rouge_l("positive impact", "Positive impact") == 1.0
    assert rouge_l("", "Positive impact") == 0.0
    assert 0 < rouge_l("a positive trend", "Positive impact") < 1


def test_malformed_line_names_file_and_line(tmp_path):
    from extractbench.suites.item import DataError

    path = tmp_path / "tb.jsonl"
    path.write_text('{"id": 1}\n')
    with pytest.raises(DataError, match=r"tb.jsonl:1: expected a JSON object with id"):
        tablebench.read_jsonl(path, ("id", "qtype"))
