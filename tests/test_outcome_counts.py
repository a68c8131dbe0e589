"""Items counted by outcome once, for the record's counts, the gates and the JUnit file: a
skipped item is not scored (the record's ``failed`` and the gate count it), and JUnit shows
it as skipped, never as passed."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from extractbench.plugins.outputs.junit import junit_xml
from extractbench.plugins.record import RunRecord, item_counts, outcome_counts, parse_record
from tests.conftest import decide_facts

ITEMS = [
    {"id": "x/0", "suite": "x", "scores": {"a": 1.0}},
    {"id": "x/1", "suite": "x", "outcome": "failed", "error": "boom"},
    {"id": "x/2", "suite": "x", "outcome": "skipped"},
    {"id": "y/0", "suite": "y", "scores": {"a": 1.0}},
]


def test_one_count_for_the_record_the_gates_and_junit():
    record = {"counts": {"items": 4, "expected": 4}, "items": ITEMS}
    parsed: RunRecord = parse_record(
        {"schema_version": 2, "run_id": "t", "selection": {}, **record}
    )
    outcomes = outcome_counts(parsed.items)
    assert outcomes == (2, 1, 1, {"x": 2})
    counts = item_counts(parsed.items, 4)
    assert (counts.scored, counts.failed) == (2, 2)
    decision = decide_facts("x/a>=0", "y/a>=0", **record)
    gates = {g.expression: g for g in decision.gates}
    assert gates["x/a>=0"].passed is None  # not decided: fails closed
    assert gates["x/a>=0"].reason.startswith("not evaluated: 1 of 3 selected items of x")
    assert gates["y/a>=0"].passed is True and decision.status != 0
    suite = ET.fromstring(junit_xml(parsed.decided(decision))).find("testsuite")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    # the failed item; the gate its failures left undecided is a skipped case with the reason
    assert (suite.get("failures"), suite.get("skipped")) == ("1", "2")
    [gate] = [
        c for c in suite.iter("testcase") if c.get("classname") == "gate" and c.get("name") == "x/a"
    ]
    assert gate.find("skipped").get("message").startswith("gate x/a>=0 not evaluated: 1 of 3")
    assert [child.tag for child in cases["x/2"]] == ["skipped"]
    assert [child.tag for child in cases["x/1"]] == ["failure"]
