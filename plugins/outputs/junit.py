"""JUnit XML from a run record, for every path that ends a run (live, ``--rescore``,
``extractbench merge`` and ``report``): shaped as pytest's ``--junitxml``, one case per
item (classname and name from its pytest node id, its scores, a ``<failure>`` when it
failed, or, with ``--junit-pass-mark``, when it scored below the mark), one per item an early stop left out (skipped: "not run: decided early"), one per other
test, one per gate (classname ``gate``) and per regression check (classname
``regression``).

The file follows pytest's ``junit_family`` as the run recorded it (``settings.junit_family``,
pytest's default ``xunit2``): under ``xunit2`` it validates against the Surefire/Jenkins
schema (``junit-10.xsd``), which allows ``<properties>`` only on ``<testsuite>``, so a
case's scores go to its ``<system-out>``; under ``xunit1`` and ``legacy`` they are the
case's ``<properties>``, as pytest's ``record_property`` writes them."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

from extractbench.plugins.outputs.early_stop_report import not_run_items
from extractbench.plugins.outputs.eee_samples import lower_is_better
from extractbench.plugins.outputs.metric_facts import UNIT, MetricFacts
from extractbench.plugins.record import GateEntry, ItemEntry, RunRecord, outcome_counts
from extractbench.plugins.verdict.gates import short_of_n, unanswered
from extractbench.plugins.verdict.sequential_gates import ANYTIME

__all__ = [
    "VerdictCase",
    "verdict_cases",
    "suite_properties",
    "junit_xml",
    "below_pass_mark",
    "junit_names",
    "xml_safe",
    "junit_family",
]


@dataclass(frozen=True)
class VerdictCase:
    """A gate or regression check as a test case: JUnit writes it (classname ``gate`` or
    ``regression``), and the live run reports it to pytest's terminal the same way.

    Attributes:
        outcome: ``passed``, ``failed`` (a failed check, or a gate left open that keeps
            the run from passing), or ``skipped`` (a gate the run did not decide for a
            reason the verdict names otherwise, or one of a suite the command left out).
    """

    classname: str
    name: str
    outcome: str
    message: str
    properties: tuple[tuple[str, Any], ...] = ()

    @property
    def passed(self) -> bool:
        """Whether the check passed."""
        return self.outcome == "passed"


def _gate_case(gate: GateEntry, narrow: bool) -> VerdictCase:
    if gate.passed is not None:
        outcome = "passed" if gate.passed else "failed"
        message = f"gate {gate.expression} failed: {gate.reason}"
    else:
        open_ = short_of_n(gate) or unanswered(gate, narrow)
        outcome = "failed" if open_ else "skipped"
        message = f"gate {gate.expression} {gate.reason}"
    props = (
        ("expression", gate.expression),
        ("value", "" if gate.value is None else gate.value),
        ("n", "" if gate.n is None else gate.n),
        *((("warning", gate.warning),) if gate.warning else ()),
        *_sequence_properties(gate),
    )
    return VerdictCase("gate", gate.metric, outcome, message, props)


def _sequence_properties(gate: GateEntry) -> tuple[tuple[str, Any], ...]:
    """How a gate's confidence sequence decided it (``--stop-when-decided``), if it did."""
    seq = gate.sequence
    if seq is None:
        return ()
    return (
        ("decided_after", seq.n), ("of", seq.population), ("level", seq.level),
        ("sequence", f"[{seq.low:.6f}, {seq.high:.6f}]"), ("method", seq.method),
    )  # fmt: skip


def verdict_cases(record: RunRecord) -> list[VerdictCase]:
    """Every gate (``gate::suite/metric``; one not decided is skipped with its reason, or
    failed when it keeps the run from passing: :func:`plugins.verdict.gates.unanswered`,
    a minimum n not met), a baseline that shares no item (``regression::baseline``) and
    every comparable regression check (``regression::suite/metric``) of a decided record,
    in that order."""
    cases = [_gate_case(g, record.selection.gates_may_be_left_out) for g in record.gates]
    base = record.baseline
    if base is not None and base.failed:
        cases.append(
            VerdictCase(
                "regression",
                "baseline",
                "failed",
                f"baseline {base.reason}",
                (("shared_items", base.shared_items),),
            )  # fmt: skip
        )
    for c in base.comparisons if base is not None else []:
        if c.delta is None:
            continue
        assert base is not None  # its comparisons are being read
        message = (
            f"regression {c.metric}: paired delta {c.delta:+.4f} [{c.ci_low:+.4f}, "
            f"{c.ci_high:+.4f}] exceeds --max-regression {base.max_regression}: {c.verdict}"
        )
        props = (("delta", c.delta), ("ci_low", c.ci_low), ("ci_high", c.ci_high),
                 ("n_shared", c.n_shared))  # fmt: skip
        cases.append(
            VerdictCase("regression", c.metric, "failed" if c.failed else "passed", message, props)
        )
    return cases


def suite_properties(record: RunRecord) -> list[tuple[str, str]]:
    """Run id, verdict, model identity, every aggregate (mean, 95% CI, n), every suite's
    speed figures (``fda/latency_p95_s``) and each gate's warning as ``(name, value)``
    pairs for the ``<testsuite>``'s properties."""
    model = record.model
    verdict = record.verdict
    props = [
        ("extractbench.run_id", record.run_id),
        ("extractbench.verdict", verdict.word if verdict else ""),
        ("extractbench.exit_status", str(record.exit_status)),
    ]
    if verdict is not None and verdict.reasons:
        props.append(("extractbench.reasons", " | ".join(verdict.reasons)))
    props += [
        (f"extractbench.model.{k}", str(model.get(k, ""))) for k in ("name", "backend", "sha256")
    ]
    for key, agg in record.aggregates.items():
        # a stopped estimate's interval is its suite's anytime-valid bounds, or none
        bounds = [(f"{key}.ci95", f"[{agg.ci_low:.6f}, {agg.ci_high:.6f}]")]
        if agg.stopped_early:
            bounds = [(f"{key}.anytime_bounds", b[1]) for b in bounds if agg.ci_method == ANYTIME]
            bounds.append((f"{key}.stopped_estimate", "true"))
        props += [(key, f"{agg.mean:.6f}"), *bounds, (f"{key}.n", str(agg.n))]
    for suite, speed in record.speed.items():
        props += [
            (f"{suite}/{k}", f"{v:.6g}") for k, v in speed.model_dump().items() if v is not None
        ]
    props += [
        (f"extractbench.warning.{g.expression}", g.warning) for g in record.gates if g.warning
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


def _properties(
    parent: ET.Element, pairs: list[tuple[str, Any]] | tuple[tuple[str, Any], ...]
) -> None:
    if pairs:
        props = ET.SubElement(parent, "properties")
        for name, value in pairs:
            ET.SubElement(props, "property", name=name, value=str(value))


def _case_facts(
    case: ET.Element, pairs: list[tuple[str, Any]] | tuple[tuple[str, Any], ...], family: str
) -> None:
    """A case's ``(name, value)`` facts: ``<properties>`` (xunit1, legacy), or under
    xunit2 one ``name: value`` line each in ``<system-out>`` (appended after the case's
    failure or skip, as the schema's order allows either)."""
    if family != "xunit2":
        _properties(case, pairs)
    elif pairs:
        out = ET.Element("system-out")
        out.text = "\n".join(f"{name}: {value}" for name, value in pairs)
        case.append(out)


def junit_family(record: RunRecord) -> str:
    """The run's pytest ``junit_family`` (``xunit2`` when the record does not say)."""
    family = str(record.settings.get("junit_family") or "xunit2")
    return family if family in ("xunit1", "legacy", "xunit2") else "xunit2"


def below_pass_mark(item: ItemEntry, mark: float | None, facts: MetricFacts) -> str:
    """Why a scored item is a failed JUnit case under ``--junit-pass-mark`` (``mark``):
    every one of its scores on the 0-1 scale where higher is better is below ``mark``
    (``"below the pass mark 1: kv/accuracy=0"``); "" when it is not (no mark, an item
    that did not pass, or no such score)."""
    if mark is None or item.outcome != "passed":
        return ""
    scores = [
        (metric, value)
        for metric, value in item.scores.items()
        if value is not None
        and not lower_is_better(metric)
        and facts.scale(f"{item.suite}/{metric}") == UNIT
    ]
    if not scores or any(value >= mark for _, value in scores):
        return ""
    said = ", ".join(f"{item.suite}/{m}={v:g}" for m, v in scores)
    return f"below the pass mark {mark:g}: {said}"


def junit_xml(record: RunRecord, facts: MetricFacts | None = None) -> str:
    """The JUnit XML of a decided run record, shaped as pytest's ``--junitxml``: one case
    per item (classname and name from its pytest node id, its prediction and scores as
    properties, a ``<failure>`` when it failed, or with the record's
    ``settings.junit_pass_mark`` when it scored below it: :func:`below_pass_mark`), one
    per other test, one per :func:`verdict_cases` case; the verdict, model and aggregates
    as ``<testsuite>`` properties (the case's facts as :func:`junit_family` allows). The
    same function serves the live run, ``--rescore``, ``merge`` and ``report``, so their
    files agree.

    Args:
        record: a decided run record.
        facts: each metric's scale (none given: every metric on 0-1).
    """
    facts = facts or MetricFacts()
    mark = record.settings.get("junit_pass_mark")
    cases = verdict_cases(record)
    family = junit_family(record)
    items, others, left = record.items, record.other_tests, not_run_items(record)
    outcomes = outcome_counts(items)
    below = {it.id: why for it in items if (why := below_pass_mark(it, mark, facts))}
    failures = outcomes.failed + len(below) + sum(c.outcome == "failed" for c in cases)
    failures += sum(t.outcome == "failed" for t in others)
    skipped = outcomes.skipped + sum(t.outcome == "skipped" for t in others)
    skipped += sum(c.outcome == "skipped" for c in cases) + len(left)
    root = ET.Element("testsuites", name="extractbench")
    suite = ET.SubElement(
        root, "testsuite", name="extractbench", errors="0", failures=str(failures),
        skipped=str(skipped), tests=str(len(items) + len(others) + len(cases) + len(left)),
        time=f"{record.duration_s:.3f}", timestamp=record.started_at,
    )  # fmt: skip
    _properties(suite, suite_properties(record))
    for it in items:
        case = _case(suite, *junit_names(it.test or f"{it.suite}::{it.id}"), it.latency_s or 0.0)
        pairs: list[tuple[str, Any]] = []
        if it.prediction is not None:
            pairs.append(("prediction", it.prediction))
        pairs += [(f"{it.suite}/{k}", "" if v is None else v) for k, v in it.scores.items()]
        if family != "xunit2":
            _properties(case, pairs)
        if it.outcome == "failed":
            ET.SubElement(case, "failure", message=str(it.error or "failed"))
        elif it.id in below:
            ET.SubElement(case, "failure", message=below[it.id])
        elif it.outcome == "skipped":
            ET.SubElement(case, "skipped", message=str(it.error or "skipped"))
        if family == "xunit2":
            _case_facts(case, pairs, family)
    for gone in left:  # the early stop's: skipped, the message saying why
        ET.SubElement(_case(suite, *junit_names(gone.nodeid)), "skipped", message=gone.message)
    for test in others:
        case = _case(suite, *junit_names(test.nodeid), test.duration_s)
        if test.outcome != "passed":
            ET.SubElement(case, "failure" if test.outcome == "failed" else "skipped",
                          message=str(test.error or test.outcome))  # fmt: skip
    for c in cases:
        case = _case(suite, c.classname, c.name)
        if family != "xunit2":
            _properties(case, c.properties)
        if not c.passed:
            ET.SubElement(
                case, "failure" if c.outcome == "failed" else "skipped", message=c.message
            )
        if family == "xunit2":
            _case_facts(case, c.properties, family)
    for element in root.iter():  # an answer may hold characters XML 1.0 cannot
        for key, value in element.attrib.items():
            element.set(key, xml_safe(value))
        if element.text:
            element.text = xml_safe(element.text)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_safe(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold (control characters, lone
    surrogates) written as ``#xHH``, as pytest's own JUnit writer does."""
    return _NOT_XML.sub(lambda m: f"#x{ord(m.group(0)):02X}", text)
