"""The run state keeps the record's typed models from their arrival: a suite's facts as an
xdist worker sends them (plain values) and back, and the record's section of them; what a
test report carries to the controller travels with the report as xdist serializes it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from extractbench.fixtures.worker_channel import ReportField
from extractbench.plugins.record import LimitInfo, SuiteInfo
from extractbench.plugins.run.controller import MODEL_EVENTS, SUITE_FACTS
from extractbench.plugins.run.crashes import CRASH_FAULT, CRASH_WORKER
from extractbench.plugins.run.item_record import ITEM_ENTRY
from extractbench.plugins.run.state import SuiteFacts


def test_a_suites_facts_travel_as_plain_values_and_come_back_equal():
    facts = SuiteFacts(
        breakdown=["subset"], items_total=9, items_selected=4,
        limit=LimitInfo(value=4, source="--limit"), notes={"data": {"files": 2}},
        items_deselected=1,
    )  # fmt: skip
    sent = facts.model_dump()
    assert sent["limit"] == {"value": 4, "source": "--limit"}
    assert SuiteFacts.model_validate(sent) == facts


def test_the_record_section_leaves_the_deselected_count_to_the_selection():
    facts = SuiteFacts(items_selected=3, items_deselected=2, notes={"k": 1})
    section = SuiteInfo.model_validate(facts.record_info())
    assert section == SuiteInfo(items_selected=3, notes={"k": 1})
    with pytest.raises(ValidationError):  # the record's model knows no such field
        SuiteInfo.model_validate(facts.model_dump())


def test_a_malformed_fact_from_a_worker_is_refused_on_arrival():
    with pytest.raises(ValidationError):
        SuiteFacts.model_validate({"items_selected": "4"})  # strict: no text for a count


def test_a_report_field_travels_with_the_report_as_xdist_sends_it(pytestconfig):
    """A worker's report reaches the controller through pytest's report serialization
    (xdist's ``pytest_report_to_serializable``): a field set on it comes back with its
    value, and one never set reads None."""
    report = pytest.TestReport("t.py::t", ("t.py", 0, "t"), {}, "passed", None, "call")
    ITEM_ENTRY.put(report, {"id": "fda/x", "scores": {"accuracy": 1.0}})
    MODEL_EVENTS.put(report, ["model loaded (gw0)"])
    data = pytestconfig.hook.pytest_report_to_serializable(config=pytestconfig, report=report)
    back = pytestconfig.hook.pytest_report_from_serializable(config=pytestconfig, data=data)
    assert ITEM_ENTRY.get(back) == {"id": "fda/x", "scores": {"accuracy": 1.0}}
    assert MODEL_EVENTS.get(back) == ["model loaded (gw0)"]
    assert SUITE_FACTS.get(back) is None and CRASH_WORKER.get(back) is None
    assert ReportField[str]("extractbench_unset").get(back) is None


def test_each_report_field_has_its_own_attribute():
    fields = [ITEM_ENTRY, MODEL_EVENTS, SUITE_FACTS, CRASH_WORKER, CRASH_FAULT]
    names = [f.name for f in fields]
    assert len(set(names)) == len(names) and all(n.startswith("extractbench_") for n in names)
