"""JUnit XML from a run record: the ``<testsuite>`` properties of a live run (pytest's
``--junitxml`` writes its test cases) and the whole file for a record made without pytest
(``extractbench merge``), shaped as pytest's: one case per item (classname and name from
its pytest node id, its scores as properties, a ``<failure>`` when it failed), one per
gate (classname ``gate``) and per regression check (classname ``regression``)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from plugins.verdict.decide import verdict

__all__ = ["suite_properties", "junit_xml", "junit_names", "xml_safe"]


def suite_properties(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Run id, verdict, model identity and every aggregate (mean, 95% CI, n) as
    ``(name, value)`` pairs for the ``<testsuite>``'s properties."""
    model = record.get("model") or {}
    decision = verdict(record)
    props = [
        ("extractbench.run_id", str(record.get("run_id", ""))),
        ("extractbench.verdict", decision.word),
        ("extractbench.exit_status", str(decision.status)),
    ]
    if decision.reasons:
        props.append(("extractbench.reasons", " | ".join(decision.reasons)))
    props += [
        (f"extractbench.model.{k}", str(model.get(k, ""))) for k in ("name", "backend", "sha256")
    ]
    for key, agg in (record.get("aggregates") or {}).items():
        props += [
            (key, f"{agg['mean']:.6f}"),
            (f"{key}.ci95", f"[{agg['ci_low']:.6f}, {agg['ci_high']:.6f}]"),
            (f"{key}.n", str(agg["n"])),
        ]
    return props


def junit_names(nodeid: str) -> tuple[str, str]:
    """pytest's JUnit ``(classname, name)`` of a node id:
    ``suites/fda/test_fda.py::test_fda[fda/K1/c0/key]`` -> ``("suites.fda.test_fda",
    "test_fda[fda/K1/c0/key]")``."""
    path, _, rest = nodeid.partition("::")
    parts = [path.removesuffix(".py").replace("/", "."), *rest.split("::")]
    return ".".join(parts[:-1]), parts[-1]


def _case(suite: ET.Element, classname: str, name: str, time_s: float = 0.0) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=classname, name=name, time=f"{time_s:.3f}")


def _properties(parent: ET.Element, pairs: list[tuple[str, Any]]) -> None:
    if pairs:
        props = ET.SubElement(parent, "properties")
        for name, value in pairs:
            ET.SubElement(props, "property", name=name, value=str(value))


def junit_xml(record: Mapping[str, Any]) -> str:
    """The JUnit XML of a run record (see the module docstring).

    Items need their pytest node id (``test``, recorded since the Suite protocol); an
    item without one is named ``<suite>::<item id>``.
    """
    items = record.get("items", [])
    gates = [g for g in record.get("gates", []) if g.get("passed") is not None]
    base = record.get("baseline") or {}
    checks = [c for c in base.get("comparisons", []) if c.get("delta") is not None]
    failures = sum(it.get("outcome") != "passed" for it in items)
    failures += sum(not g["passed"] for g in gates) + sum(bool(c.get("failed")) for c in checks)
    tests = len(items) + len(gates) + len(checks) + bool(base.get("failed"))
    failures += bool(base.get("failed"))
    root = ET.Element("testsuites", name="extractbench")
    suite = ET.SubElement(
        root, "testsuite", name="extractbench", errors="0", failures=str(failures),
        skipped="0", tests=str(tests), time=f"{float(record.get('duration_s') or 0):.3f}",
        timestamp=str(record.get("started_at", "")),
    )  # fmt: skip
    _properties(suite, suite_properties(record))
    for it in items:
        test = it.get("test") or f"{it.get('suite')}::{it['id']}"
        case = _case(suite, *junit_names(test), float(it.get("latency_s") or 0))
        pairs: list[tuple[str, Any]] = []
        if it.get("prediction") is not None:
            pairs.append(("prediction", it["prediction"]))
        pairs += [
            (f"{it['suite']}/{k}", "" if v is None else v) for k, v in it.get("scores", {}).items()
        ]
        _properties(case, pairs)
        if it.get("outcome") != "passed":
            ET.SubElement(case, "failure", message=str(it.get("error") or "failed"))
    for gate in gates:
        case = _case(suite, "gate", gate["metric"])
        value = gate.get("value")
        _properties(
            case, [("expression", gate["expression"]), ("value", "" if value is None else value)]
        )
        if not gate["passed"]:
            message = f"gate {gate['expression']} failed: {gate.get('reason', '')}"
            ET.SubElement(case, "failure", message=message)
    if base.get("failed"):
        case = _case(suite, "regression", "baseline")
        ET.SubElement(case, "failure", message=f"baseline {base.get('reason', '')}")
    for c in checks:
        case = _case(suite, "regression", c["metric"])
        _properties(case, [("delta", c["delta"]), ("ci_low", c["ci_low"]),
                           ("ci_high", c["ci_high"]), ("n_shared", c["n_shared"])])  # fmt: skip
        if c.get("failed"):
            ET.SubElement(
                case, "failure", message=f"regression {c['metric']}: {c.get('verdict', '')}"
            )
    for element in root.iter():  # an answer may hold characters XML 1.0 cannot
        for key, value in element.attrib.items():
            element.set(key, xml_safe(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold (control characters, lone
    surrogates) written as ``#xHH``, as pytest's own JUnit writer does."""
    return _NOT_XML.sub(lambda m: f"#x{ord(m.group(0)):02X}", text)
