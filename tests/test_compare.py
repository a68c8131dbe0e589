"""``extractbench compare OLD.json NEW.json``: per-item changes and the baseline gate's paired
test, on two toy runs whose data differ in one document."""

from __future__ import annotations

import json

import pytest

from extractbench.plugins.cli.compare import compare_runs
from extractbench.plugins.cli.main import main as cli_main
from extractbench.plugins.record import load_record
from extractbench.plugins.verdict.baseline import compare_records
from tests.conftest import toy_rows


@pytest.fixture
def two_runs(toy):
    """run OLD on the toy data, NEW on the same data with document d1's colour changed to
    blue (the fake model now answers blue: that item's accuracy goes 0 -> 1)."""
    common = ["--backend", "fake", "-p", "no:cacheprovider", "--no-step-summary"]
    assert (
        toy.runpytest_subprocess(*common, "--data-dir", "data", "--report-json", "old.json").ret
        == 0
    )
    rows = toy_rows()
    for row in rows:
        if row["doc"] == "d1":
            row["text"] = row["text"].replace("Colour: red", "Colour: blue")
    new_data = toy.mkdir("data2")
    (new_data / "toy.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert (
        toy.runpytest_subprocess(*common, "--data-dir", "data2", "--report-json", "new.json").ret
        == 0
    )
    return toy.path / "old.json", toy.path / "new.json"


def test_compare_lists_changed_answers_and_the_paired_test(two_runs, capsys, tmp_path):
    old, new = two_runs
    page = tmp_path / "compare.html"
    assert cli_main(["compare", str(old), str(new), "--html", str(page)]) == 0
    out = capsys.readouterr().out
    result = compare_runs(load_record(old), load_record(new))
    # d1's colour answer changes (red -> blue): accuracy 0 -> 1, length +0.05
    assert result.suites() == {"toy": {"shared": 24, "answers changed": 1, "up": 1, "down": 0}}
    moves = [(c.id, m, round(d, 4)) for c, m, d in result.largest(None)]
    assert moves == [("toy/d1/colour", "accuracy", 1.0), ("toy/d1/colour", "length", 0.05)]
    assert "toy/d1/colour accuracy: 0.0000 -> 1.0000 (+1.0000)" in out
    # the paired test is the baseline gate's own (plugins.verdict.baseline.compare_records)
    gate = compare_records(json.loads(new.read_text()), json.loads(old.read_text()), None)
    accuracy = next(c for c in gate if c.metric == "toy/accuracy")
    assert accuracy.delta == pytest.approx(1 / 24)
    assert next(c for c in result.metrics if c.metric == "toy/accuracy") == accuracy
    assert f"toy/accuracy   0.6250   0.6667  {accuracy.delta:+.4f}" in out
    html = page.read_text()
    assert "toy/d1/colour" in html and "toy/d0/colour" not in html


def test_compare_of_an_unreadable_record_is_a_usage_error(tmp_path, capsys):
    missing = tmp_path / "missing.json"
    assert cli_main(["compare", str(missing), str(missing)]) == 4
    assert "extractbench compare:" in capsys.readouterr().err
