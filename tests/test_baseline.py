"""Baseline comparison on synthetic run records: deltas, CIs, regression verdicts."""

from __future__ import annotations

import json

import pytest

from extractbench.plugins.cli.main import main as cli_main
from extractbench.plugins.record import SCHEMA_VERSION
from extractbench.plugins.verdict.baseline import compare_records


def record(
    scores: dict[str, float], metric: str = "accuracy", suite: str = "fda", run_id: str = "r"
) -> dict:
    items = [
        {"id": f"{suite}/{i}", "suite": suite, "outcome": "passed", "scores": {metric: v}}
        for i, v in scores.items()
    ]
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "model": {"name": "m"},
        "suites": {suite: {"version": 1}},  # one suite version: comparable
        "complete": True,
        "counts": {"items": len(items), "expected": len(items), "scored": len(items), "failed": 0},
        "items": items,
    }


def binary(n: int, ones: int) -> dict[str, float]:
    return {f"i{k:04d}": 1.0 if k < ones else 0.0 for k in range(n)}


def test_identical_runs_have_zero_delta_and_no_regression():
    base = record(binary(100, 60))
    [c] = compare_records(base, base, 0.02)
    assert (c.delta, c.ci_low, c.ci_high, c.verdict, c.failed) == (
        0.0,
        0.0,
        0.0,
        "no significant change",
        False,
    )


def test_large_significant_drop_fails():
    [c] = compare_records(record(binary(200, 80)), record(binary(200, 120)), 0.02)
    assert c.delta == pytest.approx(-0.2)
    assert c.ci_high < 0 and c.verdict == "regression" and c.failed


def test_significant_drop_within_tolerance_passes():
    [c] = compare_records(record(binary(2000, 1180)), record(binary(2000, 1200)), 0.02)
    assert c.delta == pytest.approx(-0.01) and c.verdict == "regression" and not c.failed


def test_large_but_insignificant_drop_passes():
    current = {"a": 0.0, "b": 1.0, "c": 1.0}  # one item flipped out of three
    [c] = compare_records(record(current), record({"a": 1.0, "b": 1.0, "c": 1.0}), 0.02)
    assert c.delta == pytest.approx(-1 / 3) and c.ci_high == 0.0 and not c.failed


def test_improvement_never_fails_and_unshared_items_are_counted():
    cur = record({**binary(100, 90), "new1": 1.0})
    base = record({**binary(100, 50), "old1": 0.0, "old2": 0.0})
    [c] = compare_records(cur, base, 0.0)
    assert c.verdict == "improvement" and not c.failed
    assert (c.n_shared, c.only_current, c.only_baseline) == (100, 1, 2)


def test_metric_in_one_run_only_is_not_comparable():
    results = compare_records(record(binary(10, 5)), record(binary(10, 5), metric="other"), 0.02)
    assert [(c.metric, c.verdict) for c in results] == [
        ("fda/accuracy", "not comparable"),
        ("fda/other", "not comparable"),
    ]


def test_cli_report_renders_and_gates_on_regression(tmp_path):
    cur, base = tmp_path / "cur.json", tmp_path / "base.json"
    cur.write_text(
        json.dumps({**record(binary(200, 80), run_id="cur"), "aggregates": {}, "gates": []})
    )
    base.write_text(json.dumps(record(binary(200, 120), run_id="base")))
    html, md = tmp_path / "out.html", tmp_path / "out.md"
    assert (
        cli_main(
            [
                "report",
                str(cur),
                "--baseline",
                str(base),
                "--max-regression",
                "0.02",
                "--html",
                str(html),
                "--summary-md",
                str(md),
            ]
        )
        == 1
    )
    page = html.read_text()
    assert "Against baseline" in page and "regression" in page
    # the aggregate section is markup, not text: headings and tables render
    assert '<section class="extractbench-summary"' in page and "&lt;section" not in page
    assert "<h2" in page and "<table" in page
    text = md.read_text()
    assert "| fda/accuracy | 0.6000 | 0.4000 | -0.2000 |" in text and "FAIL: regression" in text
    assert cli_main(["report", str(cur), "--baseline", str(base), "--summary-md", str(md)]) == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not a readable JSON run record"),
        ('{"a": 1}', "no schema_version"),
        ('{"schema_version": 999}', "schema version 999"),
    ],
)
def test_damaged_or_foreign_records_end_with_one_line(tmp_path, capsys, content, message):
    path = tmp_path / "run.json"
    path.write_text(content)
    assert cli_main(["report", str(path), "--html", str(tmp_path / "x.html")]) == 4
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
