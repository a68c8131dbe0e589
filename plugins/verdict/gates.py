"""Release gates: ``suite/metric <op> threshold`` checked against a run's aggregates."""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from extractbench.plugins.record import GateEntry, GateSequence, NotEvaluated

__all__ = [
    "Gate", "GateError", "parse_gate", "gates_from_config", "evaluate_gates",
    "STATS", "MEAN_N_FLOOR",
]  # fmt: skip

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
}
STATS = ("mean", "ci_low", "ci_high", "n")  # what a gate may check; "n": a minimum n
MEAN_N_FLOOR = 30  # a gate on a mean over fewer items warns (the CLT's usual rule of thumb)
_GATE_RE = re.compile(
    r"^\s*(?P<metric>[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-/]+)?)(:(?P<stat>[A-Za-z_]+))?\s*"
    r"(?P<op>>=|<=|>|<)\s*(?P<threshold>[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?)\s*$"
)
_EXAMPLES = "e.g. 'fda/accuracy>=0.30', 'fda/accuracy:ci_low>=0.2', 'fda:n>=30'"


class GateError(ValueError):
    """A gate expression cannot be parsed; the message says what a valid one looks like."""


@dataclass(frozen=True)
class Gate:
    """One threshold on a statistic of a metric, or a minimum n.

    Attributes:
        metric: ``suite/metric`` key, e.g. ``fda/accuracy``; for ``stat`` ``n`` also a
            bare suite (``fda``: every gate of the suite).
        op: one of ``>=``, ``>``, ``<=``, ``<`` (``>=`` only for ``n``).
        threshold: the bound, in the metric's own unit (``n``: a count of items).
        source: where the gate came from (``--gate`` or ``pyproject.toml``).
        stat: ``mean`` (the default), ``ci_low`` or ``ci_high`` (the bounds of the 95%
            CI), or ``n``: gates of ``metric`` over fewer items are not decided.
    """

    metric: str
    op: str
    threshold: float
    source: str
    stat: str = "mean"

    @property
    def expression(self) -> str:
        """The canonical text form, e.g. ``fda/accuracy>=0.3``, ``fda/accuracy:ci_low>=0.2``."""
        stat = "" if self.stat == "mean" else f":{self.stat}"
        return f"{self.metric}{stat}{self.op}{self.threshold:g}"

    @property
    def suite(self) -> str:
        """The suite the gate is on."""
        return self.metric.split("/", 1)[0]

    def covers(self, metric: str) -> bool:
        """Whether this minimum n applies to a gate on ``metric``."""
        return self.stat == "n" and self.metric in (metric, metric.split("/", 1)[0])

    def entry(
        self,
        value: float | None,
        passed: bool | None,
        reason: str,
        n: int | None = None,
        min_n: int | None = None,
        warning: str | None = None,
        not_evaluated: NotEvaluated | None = None,
        sequence: GateSequence | None = None,
    ) -> GateEntry:
        """This gate checked against a run: the entry the verdict, the record and every
        report read.

        Args:
            value: the statistic in this run (``n``: the metric's n), or None when no
                item has the metric.
            passed: True/False; None when the gate was not decided (its suite was not
                selected, skipped for missing data, or n is below a minimum).
            reason: one line saying why, for the terminal and JUnit.
            n: the number of values behind ``value`` (items; calls for a speed figure).
            min_n: the largest minimum n that applies to the gate, or None.
            warning: a gate on a mean of fewer than :data:`MEAN_N_FLOOR` items says so.
            not_evaluated: why a gate of a suite that did not run was not evaluated:
                ``not_selected`` (the command left the suite out), ``skipped``
                (``--skip-missing-data``) or ``unloaded`` (its data did not load).
            sequence: how its confidence sequence decided it (``--stop-when-decided``).
        """
        return GateEntry(
            expression=self.expression, metric=self.metric, stat=self.stat, op=self.op,
            threshold=self.threshold, source=self.source, value=value, passed=passed,
            reason=reason, n=n, min_n=min_n, warning=warning, not_evaluated=not_evaluated,
            sequence=sequence,
        )  # fmt: skip


def parse_gate(text: str, source: str = "--gate") -> Gate:
    """Parse ``"fda/accuracy>=0.30"`` into a :class:`Gate`.

    ``suite/metric[:stat] OP NUMBER``: ``stat`` is ``mean`` (the default), ``ci_low`` or
    ``ci_high``; ``suite[/metric]:n>=K`` is a minimum n (K a positive integer).

    Raises:
        GateError: the text is not of that form.
    """
    match = _GATE_RE.match(text)
    if not match:
        raise GateError(
            f"{source}: cannot parse gate {text!r}; expected 'suite/metric[:STAT] OP NUMBER' "
            f"with one of >=, >, <=, < ({_EXAMPLES})"
        )
    threshold = float(match["threshold"])
    if not math.isfinite(threshold):
        raise GateError(f"{source}: gate {text!r}: the threshold must be a finite number")
    stat = match["stat"] or "mean"
    if stat not in STATS:
        raise GateError(
            f"{source}: gate {text!r}: unknown statistic {stat!r}; one of {', '.join(STATS)}"
        )
    if stat == "n" and (match["op"] != ">=" or threshold < 1 or threshold != int(threshold)):
        raise GateError(
            f"{source}: gate {text!r}: a minimum n is written 'suite:n>=K' or "
            "'suite/metric:n>=K' with K a positive integer"
        )
    if stat != "n" and "/" not in match["metric"]:
        raise GateError(
            f"{source}: cannot parse gate {text!r}; expected 'suite/metric' ({_EXAMPLES})"
        )
    return Gate(match["metric"], match["op"], threshold, source, stat)


def gates_from_config(table: Mapping[str, Any], source: str = "pyproject.toml") -> list[Gate]:
    """Gates from ``[tool.extractbench.gates]``: ``"fda/accuracy" = ">= 0.30"``,
    ``"fda/accuracy:ci_low" = ">= 0.2"``, ``"fda:n" = ">= 30"``.

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


def _missing(
    gate: Gate,
    suite: str,
    selected: set[str],
    skipped: Mapping[str, str],
    failed_items: Mapping[str, int],
    unloaded: Mapping[str, str],
) -> GateEntry:
    """A gate whose metric has no value: not decided when its suite did not run, else
    failed (nothing measured never passes)."""
    if suite in unloaded:
        why = f"not evaluated: suite {suite!r} did not load ({unloaded[suite]})"
        return gate.entry(None, None, why, not_evaluated="unloaded")
    if suite in skipped:
        why = f"not evaluated: suite {suite!r} skipped ({skipped[suite]})"
        return gate.entry(None, None, why, not_evaluated="skipped")
    if suite not in selected:
        why = f"not evaluated: suite {suite!r} not selected by this command"
        return gate.entry(None, None, why, not_evaluated="not_selected")
    why = (
        f"{failed_items[suite]} items of {suite} failed"
        if failed_items.get(suite)
        else f"no item of {suite} recorded it"
    )
    return gate.entry(None, False, f"no scores for {gate.metric} ({why})")


def _checked(gate: Gate, stats: Mapping[str, float], minimums: list[Gate]) -> GateEntry:
    """A threshold gate on a metric with a value: decided unless n is below a minimum."""
    n = int(stats["n"])
    value = stats.get(gate.stat)
    if value is None:
        return gate.entry(
            None, False, f"{gate.metric} has no {gate.stat} (a speed figure has no interval)", n
        )
    floor = max((int(m.threshold) for m in minimums if m.covers(gate.metric)), default=None)
    ci = f"95% CI [{stats['ci_low']:.4f}, {stats['ci_high']:.4f}], " if "ci_low" in stats else ""
    said = (
        f"{gate.metric}:{gate.stat} = {value:.4f} ({ci}n={n}), required {gate.op} {gate.threshold:g}"
        if ci
        else f"{gate.metric} = {value:.4g} (n={n}), required {gate.op} {gate.threshold:g}"
    )
    warning = None
    if gate.stat == "mean" and "ci_low" in stats and n < MEAN_N_FLOOR:
        warning = (
            f"gate {gate.expression} decides on a mean of n={n} < {MEAN_N_FLOOR} items "
            f"({ci.removesuffix(', ')}); gate the interval (:ci_low) or require n (:n>=K)"
        )
    if floor is not None and n < floor:
        return gate.entry(value, None, f"not decided: n={n} below the minimum {floor} ({said})",
                          n, floor, warning)  # fmt: skip
    return gate.entry(value, _OPS[gate.op](value, gate.threshold), said, n, floor, warning)


def evaluate_gates(
    gates: list[Gate],
    stats: Mapping[str, Mapping[str, float]],
    selected: set[str],
    skipped: Mapping[str, str] | None = None,
    failed_items: Mapping[str, int] | None = None,
    unloaded: Mapping[str, str] | None = None,
) -> list[GateEntry]:
    """Check each gate against the statistics of a run.

    A gate of a suite this command did not select, or skipped for missing data with
    ``--skip-missing-data``, is not evaluated (``passed`` None, and the reason says so).
    A gate of a selected suite without a value fails: nothing measured never passes. A
    gate whose metric has fewer values than a minimum n (``fda:n>=30``,
    ``fda/accuracy:n>=30``) covering it is not decided (``passed`` None, ``n`` < ``min_n``);
    a minimum n itself passes when met and is not decided when not.

    Args:
        gates: the gates, in order.
        stats: ``suite/metric`` -> ``{"mean", "ci_low", "ci_high", "n"}`` over the run's
            scored items (a speed figure: ``{"mean", "n"}``).
        selected: suites this command selected (items collected for them).
        skipped: suite -> why it was skipped.
        failed_items: suite -> number of its items that failed.
        unloaded: suite -> why its data did not load (a usage error of the run).

    Returns:
        One :class:`plugins.record.GateEntry` per gate, in order (:meth:`Gate.entry`).
    """
    skipped, unloaded, failed_items = skipped or {}, unloaded or {}, failed_items or {}
    minimums = [g for g in gates if g.stat == "n"]
    results: list[GateEntry] = []
    for gate in gates:
        if gate.stat == "n":
            counts = [  # a suite's n: its scores' (a speed figure's n counts calls)
                int(v["n"]) for k, v in stats.items()
                if gate.covers(k) and ("ci_low" in v or k == gate.metric)
            ]  # fmt: skip
            if not counts:
                results.append(
                    _missing(gate, gate.suite, selected, skipped, failed_items, unloaded)
                )
                continue
            n = max(counts)
            passed = True if n >= gate.threshold else None
            said = f"n={n}, required >= {gate.threshold:g}"
            reason = (
                said
                if passed
                else f"not decided: {said}; the gates on {gate.metric} are not decided"
            )
            results.append(gate.entry(float(n), passed, reason, n, int(gate.threshold)))
        elif gate.metric in stats:
            results.append(_checked(gate, stats[gate.metric], minimums))
        else:
            results.append(_missing(gate, gate.suite, selected, skipped, failed_items, unloaded))
    return results


def short_of_n(gate: GateEntry) -> bool:
    """Whether a gate entry was left undecided by a minimum n alone (not by what left
    every gate undecided: a shard, an interruption, an incomplete run)."""
    n, floor = gate.n, gate.min_n
    alone = gate.reason.startswith("not decided: n=")
    return gate.passed is None and alone and n is not None and floor is not None and n < floor


def unanswered(gate: GateEntry, may_leave_out: bool) -> bool:
    """Whether a declared gate was left unevaluated where the run had to answer it: its
    suite was skipped or did not load, or was not selected by the command (unless
    ``may_leave_out``: the command named suites one by one with ``--allow-subset``:
    :attr:`plugins.record.Selection.gates_may_be_left_out`). A declared gate is the
    release contract: a command narrowed to save time does not pass without it."""
    why = gate.not_evaluated
    return gate.passed is None and (
        why in ("skipped", "unloaded") or (why == "not_selected" and not may_leave_out)
    )


__all__ += ["short_of_n", "unanswered"]
