"""Gates decided by confidence sequences as a suite's groups complete in run order
(plugins/verdict/sequential_gates.py), and the verdict's decision from a record of an
early-stopped run (plugins/verdict/decision.py)."""

from __future__ import annotations

import pytest

from extractbench.plugins.record import RunOrder
from extractbench.plugins.verdict.gates import parse_gate
from extractbench.plugins.verdict.sequential import HedgedCS
from extractbench.plugins.verdict.sequential_gates import SuiteSequence
from tests.conftest import decide_facts


def order(groups, strata=("a", "b"), ranges=None) -> RunOrder:
    return RunOrder(
        seed=0, groups=[list(g) for g in groups], stratum="key" if strata else None,
        strata=list(strata or ()), ranges=ranges or {"accuracy": [0.0, 1.0]},
    )  # fmt: skip


def feed(seq: SuiteSequence, values: dict[str, float], keys=None, failed=()) -> None:
    for i, v in values.items():
        meta = {"key": (keys or {}).get(i, "a" if int(i.split("/")[-1]) % 2 else "b")}
        seq.add(i, i not in failed, {"accuracy": v}, meta)


def ids(n: int) -> list[str]:
    return [f"s/{i}" for i in range(n)]


def test_single_item_groups_give_the_papers_sequence():
    values = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0]
    seq = SuiteSequence(order([[i] for i in ids(40)]), [parse_gate("s/accuracy>=0.9")])
    cs = HedgedCS(40, 0.10)  # the two-sided 90% sequence: 5% on each side
    for i, v in zip(ids(10), values, strict=False):
        feed(seq, {i: v})
        cs.update(v)
        assert seq.bounds("accuracy") == pytest.approx((cs.low[0], cs.high[0]))


@pytest.mark.parametrize(
    ("gate", "passed"),
    [(">=0.5", True), (">0.5", False), ("<=0.5", True), ("<0.5", False), (">=0.51", False)],
)
def test_a_gate_never_decided_early_is_decided_on_the_mean_of_every_item(gate, passed):
    """Groups of 1 to 3 items whose mean is exactly 0.5: at n = N the bounds are the
    mean, so the gate is decided as a fixed-n gate on the mean would be."""
    groups = [["s/0"], ["s/1", "s/2"], ["s/3", "s/4", "s/5"], ["s/6", "s/7"]]
    values = dict(zip(ids(8), [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0], strict=True))
    seq = SuiteSequence(order(groups), [parse_gate(f"s/accuracy{gate}")])
    feed(seq, values)
    decision = seq.decisions[f"s/accuracy{gate}"]
    assert decision.passed is passed and seq.decided
    assert decision.sequence.n == decision.sequence.population == 8
    assert decision.sequence.low == decision.sequence.high == 0.5


def test_a_clear_gate_is_decided_early_and_stays_decided():
    seq = SuiteSequence(order([[i] for i in ids(400)]), [parse_gate("s/accuracy>=0.2")])
    feed(seq, {i: float(k % 5 != 0) for k, i in enumerate(ids(400))})
    decision = seq.decisions["s/accuracy>=0.2"]
    assert decision.passed and decision.sequence.n < 100
    assert decision.sequence.low >= 0.2 and decision.sequence.population == 400


def test_groups_arriving_out_of_order_wait_for_the_groups_before_them():
    seq = SuiteSequence(order([[i] for i in ids(200)]), [parse_gate("s/accuracy>=0.1")])
    feed(seq, {i: 1.0 for i in ids(200)[1:]})  # every item but the first
    assert seq.n == 0 and not seq.decisions
    feed(seq, {"s/0": 1.0})
    assert seq.decided


def test_a_decision_waits_for_no_stratum_and_records_the_levels_it_saw():
    keys = {i: "a" for i in ids(300)} | {"s/299": "b"}
    seq = SuiteSequence(order([[i] for i in ids(300)]), [parse_gate("s/accuracy>=0.1")])
    feed(seq, {i: 1.0 for i in ids(299)}, keys)
    sequence = seq.decisions["s/accuracy>=0.1"].sequence
    assert sequence.n < 50  # level b comes last: it is not waited for
    assert sequence.stratum == "key" and sequence.strata == {"a": sequence.n}
    assert sequence.strata_total == 2 and sequence.alpha_per_side == 0.05


def test_a_minimum_n_holds_the_decision_back():
    gates = [parse_gate("s/accuracy>=0.1"), parse_gate("s:n>=150")]
    seq = SuiteSequence(order([[i] for i in ids(300)]), gates)
    feed(seq, {i: 1.0 for i in ids(300)})
    assert seq.decisions["s/accuracy>=0.1"].sequence.n == 150


def test_a_failed_item_ends_the_sequence_and_other_gates_need_every_item():
    seq = SuiteSequence(order([[i] for i in ids(300)]), [parse_gate("s/accuracy>=0.1")])
    feed(seq, {i: 1.0 for i in ids(300)}, failed={"s/1"})
    assert seq.blocked and seq.n == 1 and not seq.decided
    interval = [parse_gate("s/accuracy>=0.1"), parse_gate("s/accuracy:ci_low<=0.1")]
    seq = SuiteSequence(order([[i] for i in ids(300)]), interval)
    feed(seq, {i: 1.0 for i in ids(300)})
    assert seq.decisions and not seq.decided  # the interval's far side needs every item


def test_an_interval_gate_is_decided_by_the_iid_sequence_and_at_n_left_to_the_fixed_n_interval():
    seq = SuiteSequence(order([[i] for i in ids(400)]), [parse_gate("s/accuracy:ci_low>=0.2")])
    feed(seq, {i: float(k % 5 != 0) for k, i in enumerate(ids(400))})
    decision = seq.decisions["s/accuracy:ci_low>=0.2"]
    iid = HedgedCS(None, 0.05)  # half the gate's level: the fixed-n look spends the rest
    for k in range(decision.sequence.n):
        iid.update(float(k % 5 != 0))
    assert decision.passed and decision.sequence.n < 100
    assert decision.sequence.low == pytest.approx(iid.low[0]) and iid.low[0] >= 0.2
    assert decision.sequence.alpha_per_side == pytest.approx(0.025)
    # 40 items at 0.5: the sequence's bounds at n = N straddle 0.3, so it leaves the gate
    # open; the verdict decides it on the fixed-n 95% interval (Wilson's lower bound 0.35
    # clears 0.3), as without the option
    seq = SuiteSequence(order([[i] for i in ids(40)]), [parse_gate("s/accuracy:ci_low>=0.3")])
    feed(seq, {i: float(k % 2) for k, i in enumerate(ids(40))})
    assert "s/accuracy:ci_low>=0.3" not in seq.decisions and seq.n == 40
    low, high = seq.bounds("accuracy", iid=True)
    assert low < 0.3 < 0.5 < high


def record_facts(values: dict[str, float], ran: int, groups=None) -> dict:
    """A record of suite ``s`` whose first ``ran`` items (in run order) ran."""
    every = list(values)
    groups = groups or [[i] for i in every]
    run = [i for g in groups for i in g][:ran]
    items = [
        {"id": i, "suite": "s", "scores": {"accuracy": values[i]}, "meta": {"key": "a"}}
        for i in run
    ]
    left = [i for g in groups for i in g][ran:]
    suite = {
        "items_selected": len(every),
        "run_order": order(groups, strata=("a",)).model_dump() | {"not_run": left},
    }
    counts = {
        "items": len(items),
        "expected": len(every),
        "scored": len(items),
        "not_run": len(left),
    }
    return {
        "suites": {"s": suite},
        "items": items,
        "counts": counts,
        "selection": {"suites": ["s"]},
    }


def test_the_verdict_decides_an_early_stopped_record_by_its_sequence():
    values = {i: float(k % 4 != 0) for k, i in enumerate(ids(500))}
    facts = record_facts(values, ran=120)
    verdict = decide_facts("s/accuracy>=0.3", **facts)
    assert (verdict.word, verdict.status, verdict.complete) == ("PASS", 0, True)
    gate = verdict.gates[0]
    assert gate.passed and gate.sequence is not None and gate.sequence.population == 500
    assert gate.n == gate.sequence.n <= 120
    assert "decided after" in gate.reason and "each side's error <= 5.0%" in gate.reason


def test_items_left_out_of_a_suite_its_sequence_did_not_decide_make_the_run_incomplete():
    """A record whose gates the items that ran cannot decide (a threshold at the mean,
    or an interval gate), yet claims items not run: never a PASS."""
    values = {i: float(k % 4 != 0) for k, i in enumerate(ids(500))}
    for gate in ("s/accuracy>=0.75", "s/accuracy:ci_low>=0.74", "s/accuracy:ci_low<=0.9"):
        verdict = decide_facts(gate, **record_facts(values, ran=120))
        assert verdict.word == "INCOMPLETE" and not verdict.complete, gate
        assert verdict.gates[0].passed is None


SEQUENCE = {"method": "m", "level": 0.9, "n": 60, "population": 500, "low": -0.01, "high": 0.02,
            "mean": 0.0}  # fmt: skip


@pytest.mark.parametrize(
    ("max_regression", "sequence", "word"),
    [(None, None, "PASS"), (0.02, None, "INCOMPLETE"), (0.02, SEQUENCE, "PASS")],
)
def test_a_regression_check_needs_every_item_unless_its_sequence_decided_it(
    max_regression, sequence, word
):
    """A record decided again without its baseline (``extractbench report``): a stopped
    suite whose recorded regression check was decided at fixed n over the items that ran
    is incomplete; one its paired sequence decided is not."""
    from extractbench.plugins.record import SCHEMA_VERSION, parse_record
    from extractbench.plugins.verdict.decision import GateSet, decide

    values = {i: float(k % 4 != 0) for k, i in enumerate(ids(500))}
    data = {"schema_version": SCHEMA_VERSION, "run_id": "t"} | record_facts(values, ran=120)
    record = parse_record(data)
    check = {"metric": "s/accuracy", "n_shared": 120, "failed": False, "sequence": sequence}
    recorded = {"max_regression": max_regression, "failed": False, "comparisons": [check]}
    gates = GateSet((parse_gate("s/accuracy>=0.3"),), recorded_baseline=recorded)
    assert decide(record, gates, record.selection).word == word
