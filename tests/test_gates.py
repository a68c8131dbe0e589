from __future__ import annotations

import pytest

from extractbench.plugins.verdict.gates import (
    GateError,
    evaluate_gates,
    gates_from_config,
    parse_gate,
)


@pytest.mark.parametrize(
    ("text", "op", "threshold"),
    [
        ("fda/accuracy>=0.30", ">=", 0.30),
        ("fda/accuracy > 1e-2", ">", 0.01),
        ("a/b<=1", "<=", 1.0),
        ("strucbench/html/h_content<.5", "<", 0.5),
    ],
)
def test_parse_gate(text, op, threshold):
    gate = parse_gate(text)
    assert (gate.op, gate.threshold) == (op, threshold)


@pytest.mark.parametrize(
    "text", ["fda/accuracy=>0.3", "accuracy>=0.3", "fda/accuracy>=", "fda/accuracy>=x", ""]
)
def test_malformed_gate_names_the_option(text):
    with pytest.raises(GateError, match="--gate: cannot parse gate"):
        parse_gate(text)


def test_config_gates_need_string_conditions():
    assert gates_from_config({"fda/accuracy": ">= 0.3"})[0].expression == "fda/accuracy>=0.3"
    with pytest.raises(GateError, match="must be a string"):
        gates_from_config({"fda/accuracy": 0.3})


def test_evaluate_boundaries_and_missing_metrics():
    gates = [
        parse_gate("fda/accuracy>=0.5"),
        parse_gate("fda/accuracy>0.5"),
        parse_gate("fda/missing>=0.1"),
    ]
    gates += gates_from_config({"other/accuracy": ">= 0.1", "fda/absent": ">= 0.1"})
    stats = {"fda/accuracy": {"mean": 0.5, "ci_low": 0.4, "ci_high": 0.6, "n": 40}}
    results = evaluate_gates(gates, stats, {"fda"})
    assert [r.passed for r in results] == [True, False, False, None, False]
    assert "no scores for fda/missing" in results[2].reason


def test_a_gate_reads_its_statistic_and_a_minimum_n_covers_its_suite_or_metric():
    stats = {
        "fda/accuracy": {"mean": 0.5, "ci_low": 0.3, "ci_high": 0.7, "n": 12},
        "fda/latency_p95_s": {"mean": 1.5, "n": 12},
    }
    texts = ["fda/accuracy:ci_low>=0.35", "fda/accuracy:ci_high>=0.6", "fda/accuracy>=0.4"]
    low, high, mean = evaluate_gates([parse_gate(t) for t in texts], stats, {"fda"})
    assert (low.value, low.passed, high.value, high.passed, mean.passed) == (
        0.3,
        False,
        0.7,
        True,
        True,
    )
    assert "n=12 < 30" in mean.warning and low.warning is None
    texts = ["fda/accuracy>=0.4", "fda/latency_p95_s<=2", "fda/accuracy:n>=20"]
    mean, latency, floor = evaluate_gates([parse_gate(t) for t in texts], stats, {"fda"})
    assert mean.passed is None and (mean.n, mean.min_n) == (12, 20) and "n=12 below" in mean.reason
    assert floor.passed is None and latency.passed is True and latency.min_n is None
    assert latency.warning is None  # a speed figure is not a mean of items
    [suite_floor] = evaluate_gates([parse_gate("fda:n>=10")], stats, {"fda"})
    assert suite_floor.passed is True and suite_floor.value == 12


def test_a_minimum_n_alone_makes_a_run_incomplete_but_not_a_shard():
    from tests.conftest import decide_facts

    items = [{"id": f"t/{i}", "suite": "t", "scores": {"a": 1.0}} for i in range(3)]
    record = {"items": items, "counts": {"items": 3, "expected": 3}}
    short = decide_facts("t/a>=0.5", "t:n>=4", **record)
    assert (short.status, short.word) == (1, "INCOMPLETE")
    assert "n=3 below the minimum 4" in short.reasons[0]
    assert decide_facts("t/a>=0.5", "t:n>=3", **record).status == 0
    failed = decide_facts("t/a>=2", "t/a:ci_low>=0.1", "t:n>=4", **record)
    assert failed.word == "INCOMPLETE", "every gate on t waits for n"
    shard = decide_facts("t/a>=0.5", "t:n>=4", **record, selection={"shard": "1/2"})
    assert shard.status == 0 and all(g.passed is None for g in shard.gates)
