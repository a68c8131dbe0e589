from __future__ import annotations

import pytest

from plugins.verdict.gates import GateError, evaluate_gates, gates_from_config, parse_gate


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
    results = evaluate_gates(gates, {"fda/accuracy": 0.5}, {"fda"})
    assert [r.passed for r in results] == [True, False, False, None, False]
    assert "no scores for fda/missing" in results[2].reason
