"""Release gates: ``suite/metric <op> threshold`` checked against a run's aggregates."""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Gate", "GateError", "GateResult", "parse_gate", "gates_from_config", "evaluate_gates"]

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}
_GATE_RE = re.compile(
    r"^\s*(?P<metric>[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-/]+)\s*(?P<op>>=|<=|>|<)\s*"
    r"(?P<threshold>[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?)\s*$"
)


class GateError(ValueError):
    """A gate expression cannot be parsed; the message says what a valid one looks like."""


@dataclass(frozen=True)
class Gate:
    """One threshold on an aggregate mean.

    Attributes:
        metric: ``suite/metric`` key, e.g. ``fda/accuracy``.
        op: one of ``>=``, ``>``, ``<=``, ``<``.
        threshold: the bound, in the metric's own unit.
        source: where the gate came from (``--gate`` or ``pyproject.toml``).
    """

    metric: str
    op: str
    threshold: float
    source: str

    @property
    def expression(self) -> str:
        """The canonical text form, e.g. ``fda/accuracy>=0.3``."""
        return f"{self.metric}{self.op}{self.threshold:g}"


@dataclass(frozen=True)
class GateResult:
    """A gate checked against a run.

    Attributes:
        gate: the gate.
        value: the metric's mean in this run, or None when no item has the metric.
        passed: True/False; None when the gate was not evaluated (its suite was not
            selected, or skipped for missing data).
        reason: one line saying why, for the terminal and JUnit.
    """

    gate: Gate
    value: float | None
    passed: bool | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form for the run record."""
        return {
            "expression": self.gate.expression,
            "metric": self.gate.metric,
            "op": self.gate.op,
            "threshold": self.gate.threshold,
            "source": self.gate.source,
            "value": self.value,
            "passed": self.passed,
            "reason": self.reason,
        }


def parse_gate(text: str, source: str = "--gate") -> Gate:
    """Parse ``"fda/accuracy>=0.30"`` into a :class:`Gate`.

    Raises:
        GateError: the text is not ``suite/metric`` followed by ``>=``, ``>``, ``<=`` or
            ``<`` and a number.
    """
    match = _GATE_RE.match(text)
    if not match:
        raise GateError(
            f"{source}: cannot parse gate {text!r}; expected 'suite/metric>=NUMBER' "
            "with one of >=, >, <=, < (e.g. 'fda/accuracy>=0.30')"
        )
    threshold = float(match["threshold"])
    if not math.isfinite(threshold):
        raise GateError(f"{source}: gate {text!r}: the threshold must be a finite number")
    return Gate(match["metric"], match["op"], threshold, source)


def gates_from_config(table: Mapping[str, Any], source: str = "pyproject.toml") -> list[Gate]:
    """Gates from ``[tool.extractbench.gates]``: ``"fda/accuracy" = ">= 0.30"``.

    Raises:
        GateError: a value is not a string of the form ``<op> NUMBER``.
    """
    gates = []
    for metric, condition in table.items():
        if not isinstance(condition, str):
            raise GateError(
                f"{source} [tool.extractbench.gates]: {metric!r} must be a string such as "
                f"'>= 0.30', got {condition!r}"
            )
        gates.append(parse_gate(f"{metric}{condition}", source))
    return gates


def evaluate_gates(
    gates: list[Gate],
    means: Mapping[str, float],
    selected: set[str],
    skipped: Mapping[str, str] | None = None,
    failed_items: Mapping[str, int] | None = None,
    unloaded: Mapping[str, str] | None = None,
) -> list[GateResult]:
    """Check each gate against the aggregate means of a run.

    A gate of a suite this command did not select, or skipped for missing data with
    ``--skip-missing-data``, is not evaluated (``passed`` None, and the reason says so).
    A gate of a selected suite without a value fails: nothing measured never passes.

    Args:
        gates: the gates, in order.
        means: ``suite/metric`` -> mean over the run's scored items.
        selected: suites this command selected (items collected for them).
        skipped: suite -> why it was skipped.
        failed_items: suite -> number of its items that failed.
        unloaded: suite -> why its data did not load (a usage error of the run).
    """
    skipped = skipped or {}
    unloaded = unloaded or {}
    failed_items = failed_items or {}
    results = []
    for gate in gates:
        value = means.get(gate.metric)
        suite = gate.metric.split("/", 1)[0]
        if value is None:
            if suite in unloaded:
                results.append(
                    GateResult(
                        gate,
                        None,
                        None,
                        f"not evaluated: suite {suite!r} did not load ({unloaded[suite]})",
                    )  # fmt: skip
                )
            elif suite in skipped:
                results.append(
                    GateResult(
                        gate,
                        None,
                        None,
                        f"not evaluated: suite {suite!r} skipped ({skipped[suite]})",
                    )
                )
            elif suite not in selected:
                results.append(
                    GateResult(
                        gate,
                        None,
                        None,
                        f"not evaluated: suite {suite!r} not selected by this command",
                    )
                )
            else:
                why = (
                    f"{failed_items[suite]} items of {suite} failed"
                    if failed_items.get(suite)
                    else f"no item of {suite} recorded it"
                )
                results.append(
                    GateResult(gate, None, False, f"no scores for {gate.metric} ({why})")
                )
            continue
        passed = _OPS[gate.op](value, gate.threshold)
        results.append(
            GateResult(
                gate,
                value,
                passed,
                f"{gate.metric} = {value:.4f}, required {gate.op} {gate.threshold:g}",
            )
        )
    return results
