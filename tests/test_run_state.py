"""The run state keeps the record's typed models from their arrival: a suite's facts as an
xdist worker sends them (plain values) and back, and the record's section of them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from extractbench.plugins.record import LimitInfo, SuiteInfo
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
