"""JUnit for strict consumers: under pytest's ``junit_family=xunit2`` (its default) the
file of a live run and of ``extractbench merge`` validates against the Surefire/Jenkins
schema ``junit-10.xsd`` (tests/data, from pytest's own tests), the items' scores in
``<system-out>``; under ``xunit1`` and ``legacy`` each item keeps its score properties."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from extractbench.plugins.cli.main import main as cli_main
from tests.test_plugin import MODES, run

xmlschema = pytest.importorskip("xmlschema")
SCHEMA = xmlschema.XMLSchema(str(Path(__file__).parent / "data" / "junit-10.xsd"))
GATES = ("--gate", "toy/accuracy>=0.99", "--gate", "toy/length>=0.1")


def _item_case(root: ET.Element) -> ET.Element:
    return next(c for c in root.iter("testcase") if "toy/d0/applicant" in c.get("name", ""))


@pytest.mark.parametrize("mode", MODES)
def test_xunit2_validates_against_junit_10_xsd_with_scores_in_system_out(toy, mode):
    result, record = run(toy, mode, "--junitxml", "j.xml", *GATES)
    assert result.ret == 1 and record["settings"]["junit_family"] == "xunit2"
    SCHEMA.validate(str(toy.path / "j.xml"))  # raises on the first violation
    root = ET.parse(toy.path / "j.xml").getroot()
    item = _item_case(root)
    assert item.find("properties") is None
    assert "toy/accuracy: 1.0" in item.find("system-out").text.splitlines()
    gate = next(c for c in root.iter("testcase") if c.get("classname") == "gate")
    assert (
        gate.find("failure") is not None
        and "expression: toy/accuracy>=0.99" in gate.find("system-out").text
    )
    names = {p.get("name") for p in root.find("testsuite").find("properties")}
    assert {"toy/accuracy", "toy/accuracy.ci95", "toy/latency_p95_s"} <= names


@pytest.mark.parametrize("family", ["xunit1", "legacy"])
def test_xunit1_and_legacy_keep_per_item_score_properties(toy, family):
    result, _ = run(toy, [], "--junitxml", "j.xml", "-o", f"junit_family={family}", *GATES)
    assert result.ret == 1
    root = ET.parse(toy.path / "j.xml").getroot()
    props = {p.get("name"): p.get("value") for p in _item_case(root).iter("property")}
    assert props["toy/accuracy"] == "1.0" and "prediction" in props
    assert not SCHEMA.is_valid(str(toy.path / "j.xml")), "xunit1 is not the Surefire schema"


def test_the_junit_of_extractbench_merge_validates_too(toy, capsys):
    paths = []
    for k in (1, 2):
        path = toy.path / f"shard{k}.json"
        toy.runpytest_subprocess(
            "--backend", "fake", "--data-dir", "data", "--shard", f"{k}/2", "--report-json", str(path), *GATES
        )  # fmt: skip
        paths.append(str(path))
    status = cli_main(
        ["merge", *paths, "-o", str(toy.path / "m.json"), "--junitxml", str(toy.path / "m.xml")]
    )
    assert status == 1
    SCHEMA.validate(str(toy.path / "m.xml"))
    assert _item_case(ET.parse(toy.path / "m.xml").getroot()).find("system-out") is not None
