"""What the reports say of ``--stop-when-decided``: how each gate its confidence sequence
passed was decided (failed and undecided gates already give their reason), and the items
the early stop left out, each listed as "not run: decided early" (JUnit and CTRF as a
skipped test with that message, the terminal, markdown and HTML by suite)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from extractbench.plugins.record import Aggregate, GateSequence, RunRecord
from extractbench.plugins.verdict.sequential_gates import ANYTIME

__all__ = [
    "NotRun", "not_run_items", "decided_lines", "sequence_text", "NOT_RUN", "STOPPED_MARK",
    "STOPPED_LEGEND", "stopped_interval", "interval_head", "any_stopped",
]  # fmt: skip

NOT_RUN = "not run: decided early"
STOPPED_MARK = "†"  # beside a mean that is a stopped estimate
STOPPED_LEGEND = (
    f"{STOPPED_MARK} stopped estimate (--stop-when-decided): the mean of the items that ran "
    "before the suite was decided; its interval is the anytime-valid bounds of the suite's "
    "mean over every selected item (each side's error <= 5%), not a fixed-n 95% interval; a "
    "breakdown row after a stop shows none"
)


def any_stopped(aggregates: Mapping[str, Aggregate]) -> bool:
    """Whether an aggregate of the record is a stopped estimate (its suite stopped early)."""
    return any(a.stopped_early for a in aggregates.values())


def interval_head(aggregates: Mapping[str, Aggregate]) -> str:
    """The interval column's header: ``95% CI``, or ``interval`` where a row is a stopped
    estimate (its interval is the anytime-valid bounds, or none)."""
    return "interval" if any_stopped(aggregates) else "95% CI"


def stopped_interval(agg: Aggregate) -> str:
    """The interval cell of a stopped estimate: ``[low, high] anytime`` (the anytime-valid
    bounds of its suite's sequence) or ``–`` (none: a breakdown row, or a metric whose
    range is not finite)."""
    if agg.ci_method != ANYTIME:
        return "–"
    return f"[{agg.ci_low:.4f}, {agg.ci_high:.4f}] anytime"


@dataclass(frozen=True)
class NotRun:
    """An item the early stop left out: its suite, id, pytest node id (that of the items
    of its suite that ran, with its own id) and the line saying why."""

    suite: str
    id: str
    nodeid: str
    message: str


def not_run_items(record: RunRecord) -> list[NotRun]:
    """Every item of the record's ``suites.NAME.run_order.not_run``, in run order."""
    out = []
    for name, info in sorted(record.suites.items()):
        order = info.run_order
        if order is None or not order.not_run:
            continue
        test = next((it.test for it in record.items if it.suite == name and it.test), None)
        head = test.split("[", 1)[0] if test else f"{name}::{name}"
        message = (
            f"{NOT_RUN}: every gate of {name} was decided by its confidence sequence before "
            "this item's turn (--stop-when-decided)"
        )
        out += [NotRun(name, i, f"{head}[{i}]", message) for i in order.not_run]
    return out


def decided_lines(record: RunRecord) -> list[str]:
    """One line per suite the early stop cut short and per gate its sequence passed."""
    lines = []
    for name, info in sorted(record.suites.items()):
        order = info.run_order
        if order is not None and order.not_run:
            lines.append(
                f"{name}: {len(order.not_run):,} of {info.items_selected or 0:,} items "
                f"{NOT_RUN} (--stop-when-decided)"
            )
    lines += [
        f"GATE PASSED  {g.expression}: {g.reason}"
        for g in record.gates
        if g.sequence is not None and g.passed
    ]
    return lines


def sequence_text(seq: GateSequence) -> str:
    """A gate's sequence in words: its method and level, and its bounds and mean after the
    items behind the decision, e.g. ``hedged capital, ... (Waudby-Smith & Ramdas), 95%:
    [0.3046, 0.6886] after 216 of 1,607 items, their mean 0.4352``."""
    return (
        f"{seq.method}, {seq.level:.0%}: [{seq.low:.4f}, {seq.high:.4f}] after {seq.n:,} of "
        f"{seq.population:,} items, their mean {seq.mean:.4f}"
    )
