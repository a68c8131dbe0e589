"""The release decision: one function from (record, gates, selection) to the verdict.

:func:`decide` is the only place a verdict is made. The live run, ``--rescore``,
``extractbench merge`` and ``extractbench report`` each call it once, on the run record's
facts (items, suites, what stopped the run), the gates, and what the command selected; the
terminal, the exit status, the record, JUnit, HTML and markdown all show what it returned.
A record read later therefore gives the exit status and the words of the run that wrote
it. The README's exit-code table is :data:`EXIT_CODES`.

Invariants (each tested): a gate is PASS only if every item of its suite that the run's
selection implies was scored and the record is complete; an incomplete record never
shows a passed gate; nothing measured never passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from extractbench.plugins.record import GateEntry, RunRecord, Selection, SpeedStats, outcome_counts
from extractbench.plugins.verdict.aggregate import aggregate
from extractbench.plugins.verdict.baseline import baseline_section, item_scores
from extractbench.plugins.verdict.counts import DATA_FIGURES, data_values
from extractbench.plugins.verdict.exit_codes import (
    INTERNAL_ERROR,
    INTERRUPTED,
    OK,
    OUTPUT_ERROR,
    USAGE_ERROR,
)
from extractbench.plugins.verdict.gates import Gate, evaluate_gates
from extractbench.plugins.verdict.sequential_gates import (
    SuiteSequence,
    decided_by,
    decided_comparison,
    mark_stopped_early,
    replay,
)
from extractbench.plugins.verdict.speed import speed_changes, speed_stats, speed_values
from extractbench.plugins.verdict.status import exit_status

__all__ = ["GateSet", "Verdict", "decide"]


@dataclass(frozen=True)
class GateSet:
    """What a run is gated on.

    Attributes:
        thresholds: ``suite/metric <op> number`` gates, in order.
        baseline: a baseline record to compare with now (``--baseline``), or None.
        recorded_baseline: the comparison a record already holds, as JSON data
            (``extractbench report`` without ``--baseline``: the run's own regression
            checks), or None.
        max_regression: tolerated drop per metric (``--max-regression``).
        allow_incomparable: a baseline sharing no item does not fail the run.
        allow_partial: a baseline sharing no item of a selected suite does not fail it.
        max_slowdown: tolerated slowdown of a speed figure against the baseline
            (``--max-slowdown``, 0.2: 20%).
    """

    thresholds: tuple[Gate, ...] = ()
    baseline: RunRecord | None = None
    recorded_baseline: dict[str, Any] | None = None
    max_regression: float | None = None
    allow_incomparable: bool = False
    allow_partial: bool = False
    max_slowdown: float | None = None


@dataclass(frozen=True)
class Verdict:
    """What a run decided.

    Attributes:
        status: the process exit status (see :data:`EXIT_CODES`).
        word: ``PASS``, ``FAIL``, ``NOT EVALUATED``, ``INCOMPLETE``, ``CRASHED`` or
            ``SHARD`` (a complete shard, exit 0: not a release decision).
        reasons: one line per reason the run did not pass (empty on PASS; a shard's one
            line says to merge).
        complete: every selected item finished, nothing stopped or cut the run.
        aggregates: ``suite/metric`` -> mean, 95% CI, n and breakdowns (the record's
            ``aggregates``).
        gates: every gate's entry, its value and ``passed`` (None: not decided, and why):
            the record's ``gates``, which every report reads.
        baseline: the comparison with the baseline (the record's ``baseline``), or None.
        speed: suite -> its speed (the record's ``speed``: ``plugins.verdict.speed``).
    """

    status: int
    word: str
    reasons: list[str] = field(default_factory=list)
    complete: bool = True
    aggregates: dict[str, dict[str, Any]] = field(default_factory=dict)
    gates: list[GateEntry] = field(default_factory=list)
    baseline: dict[str, Any] | None = None
    speed: dict[str, SpeedStats] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True only for PASS (exit status 0)."""
        return self.status == OK

    def headline(self) -> str:
        """``PASS`` or e.g. ``FAIL (exit 1): gate fda/accuracy>=0.5 failed``, ``SHARD
        (exit 0): shard 1/2 complete: not a release decision; ...``."""
        if self.word == "PASS":
            return "PASS"
        return f"{self.word} (exit {self.status}): " + "; ".join(self.reasons[:3])

    def with_lost_outputs(self, lost: Sequence[str]) -> Verdict:
        """This verdict after outputs could not be written (exit 6): an output error is
        the outputs' own finding, not a new decision; a usage error, an internal error
        or an interruption keeps its own status."""
        if not lost or self.status in (USAGE_ERROR, INTERNAL_ERROR, INTERRUPTED):
            return self
        reasons = [r for r in self.reasons if r not in lost]
        return replace(self, status=OUTPUT_ERROR, word="FAIL", reasons=[*lost, *reasons])

    def entry(self) -> dict[str, Any]:
        """The record's ``verdict`` section."""
        return {"word": self.word, "reasons": list(self.reasons), "status": self.status}


def _refused(selection: Selection, gates: GateSet) -> list[str]:
    """Gated suites of which a selection (``-k``, ``-m``, ``--deselect``, ``--lf``) left
    items out, unless ``--allow-subset``: no gate is decided on part of a suite."""
    if selection.allow_subset:
        return []
    gated = {g.metric.split("/", 1)[0] for g in gates.thresholds}
    if gates.baseline is not None or gates.recorded_baseline is not None:
        gated |= set(selection.deselected)  # a regression check covers every suite
    return sorted(s for s in selection.deselected if s in gated)


def _complete(record: RunRecord, refused: list[str], not_run: int) -> bool:
    """``not_run``: the items an early stop left out of suites whose gates it decided."""
    return (
        (record.rescore_of is None or record.rescore_of.complete)
        and not refused
        and not record.interrupted
        and not record.stopped
        and not record.crashes
        and not record.usage_errors
        and record.counts.items + not_run >= record.counts.expected
    )


def _sequential(
    record: RunRecord,
    gates: GateSet,
    entries: list[GateEntry],
    baseline: dict[str, Any] | None,
) -> tuple[list[GateEntry], int, dict[str, SuiteSequence]]:
    """The gates of suites that ran in a random order (``--stop-when-decided``) that their
    confidence sequences decided, from the record's items in run order
    (:mod:`plugins.verdict.sequential_gates`); how many items the early stop left out of
    suites whose every gate and regression check was so decided; and the sequences.

    Args:
        baseline: the ``--baseline`` record as JSON data (with ``--max-regression``: its
            regression checks are decided by paired sequences), or None. A record decided
            again without it (``extractbench report``) takes a suite's recorded checks as
            decided when each carries its ``sequence``.
    """
    checks = baseline is not None and gates.max_regression is not None
    sequences = replay(
        record.suites, record.items, gates.thresholds,
        item_scores(baseline) if checks and baseline is not None else None,
        gates.max_regression if checks else None,
    )  # fmt: skip
    out = list(entries)
    for i, gate in enumerate(gates.thresholds):
        seq = sequences.get(gate.suite)
        if seq is not None and gate.expression in seq.decisions:
            out[i] = decided_by(seq.decisions[gate.expression], gate)
    recorded = gates.recorded_baseline if baseline is None else None
    if recorded is None or recorded.get("max_regression") is None:
        recorded = None

    def checked(suite: str) -> bool:
        """Without the baseline, a suite's recorded checks decided by their sequences."""
        return recorded is None or all(
            c.get("sequence") is not None
            for c in recorded.get("comparisons", [])
            if str(c["metric"]).startswith(f"{suite}/") and c.get("n_shared")
        )

    not_run = sum(
        # replay() makes a sequence only for a suite whose record has its run order
        len(record.suites[name].run_order.not_run)  # pyright: ignore[reportOptionalMemberAccess]
        for name, seq in sequences.items()
        if seq.decided and checked(name)
    )
    return out, not_run, sequences


def _stopped_checks(
    section: dict[str, Any], record: RunRecord, sequences: dict[str, SuiteSequence]
) -> None:
    """A suite the early stop cut short has its regression checks decided by its paired
    sequences: each such comparison carries the sequence's decision and bounds
    (:func:`plugins.verdict.sequential_gates.decided_comparison`); a suite that ran every
    item keeps the full-run rule's."""
    stopped = []
    for i, comparison in enumerate(section["comparisons"]):
        suite, _, metric = str(comparison["metric"]).partition("/")
        seq = sequences.get(suite)
        if seq is None or not _stopped(record, suite) or metric not in seq.regressions:
            continue
        section["comparisons"][i] = decided_comparison(comparison, seq.regressions[metric])
        if suite not in stopped:
            stopped.append(suite)
    if stopped:
        section["reason"] += (
            f"; {', '.join(stopped)} stopped early (--stop-when-decided): regression decided "
            "by the paired sequence over the shared items"
        )


def _stopped(record: RunRecord, suite: str) -> bool:
    info = record.suites.get(suite)
    return info is not None and info.stopped_early


def _undecided(gate: GateEntry, why: str) -> GateEntry:
    return gate.model_copy(
        update={"passed": None, "reason": f"not evaluated: {why} ({gate.reason})"}
    )


def _suite(gate: GateEntry) -> str:
    return gate.metric.split("/", 1)[0]


def _decide_gates(
    gates: list[GateEntry],
    record: RunRecord,
    selection: Selection,
    complete: bool,
    refused: list[str],
) -> list[GateEntry]:
    """Leave undecided what the run cannot decide: an interrupted, crashed, subset,
    incomplete or sharded run decides no gate; a gate of a suite whose selected items were
    not all scored cannot pass, unless a confidence sequence decided it or it is a minimum
    n (``fda:n>=100``) that the scored items meet."""
    if record.interrupted:
        return [_undecided(g, "run interrupted") for g in gates]
    if record.crashes:
        return [_undecided(g, "a process crashed while running an item") for g in gates]
    if refused:
        why = (
            f"a subset of {', '.join(refused)}'s selected items ran (-k, -m, --deselect, --lf); "
            "--allow-subset decides on it"
        )
        return [
            _undecided(g, why if _suite(g) in refused else "the run is incomplete") for g in gates
        ]
    if not complete:
        return [g if g.passed is None else _undecided(g, "the run is incomplete") for g in gates]
    if selection.shard:
        why = f"shard {selection.shard}; extractbench merge decides"
        return [_undecided(g, why) for g in gates]
    out = []
    for gate in gates:
        suite = _suite(gate)
        info = record.suites.get(suite)
        items = [it for it in record.items if it.suite == suite]
        scored = sum(it.outcome == "passed" for it in items)
        expected = (info.items_selected if info else None) or len(items)
        # a minimum n met by the items that ran is met (an early stop leaves the rest out),
        # and a figure of the suite's data is known before any item; any other gate decided
        # on part of its suite is not decided
        known = gate.metric.partition("/")[2] in DATA_FIGURES
        partial = scored < expected and gate.sequence is None and gate.stat != "n" and not known
        if gate.passed and partial:
            gate = _undecided(gate, f"{scored} of {expected} selected items of {suite} were scored")
        if info is not None and info.limit is not None and info.items_total:
            limit = f"on {info.items_selected} of {info.items_total} items: {info.limit.source} {info.limit.value}"
            gate = gate.model_copy(update={"reason": f"{gate.reason} ({limit})"})
        out.append(gate)
    return out


def decide(record: RunRecord, gates: GateSet, selection: Selection) -> Verdict:
    """Decide a run from its record's facts, its gates and what the command selected.

    Aggregates the scored items (mean, 95% CI, breakdowns: ``plugins.verdict.aggregate``),
    measures the speed of its model calls (``plugins.verdict.speed``), checks every gate
    on those statistics (``plugins.verdict.gates``), compares with the baseline (paired
    bootstrap, ``plugins.verdict.baseline``; speed as a ratio), leaves undecided what the
    run cannot decide (interrupted, crashed, a refused subset, incomplete, one shard; a
    gate whose suite has unscored items cannot pass), and gives the exit status.

    Args:
        record: the run record; only its facts are read (items, suites, counts,
            interruptions, crashes, usage and output errors, ``rescore_of``), never a
            verdict, aggregate or gate it may already hold.
        gates: the gates and the baseline comparison.
        selection: what the command selected (a record's own ``selection`` when the
            record is decided again: merge, report).

    Returns:
        The :class:`Verdict`.
    """
    scored = [
        {"id": it.id, "suite": it.suite, "group": it.group, "scores": it.scores, "meta": it.meta}
        for it in record.items if it.outcome == "passed"
    ]  # fmt: skip
    breakdowns = {name: info.breakdown for name, info in record.suites.items()}
    aggregates = aggregate(scored, breakdowns)
    mark_stopped_early(aggregates, record.suites, record.items)
    failed = outcome_counts(record.items).not_scored_by_suite
    chosen = {name for name, info in record.suites.items() if (info.items_selected or 0) > 0}
    chosen |= {it.suite for it in record.items}
    speed = speed_stats(it.model_dump() for it in record.items)
    results = evaluate_gates(
        list(gates.thresholds), {**aggregates, **speed_values(speed), **data_values(record.suites)},
        chosen,
        dict(selection.skipped), failed, dict(selection.unloaded),
    )  # fmt: skip
    base = gates.baseline.as_dict() if gates.baseline is not None else None
    entries, not_run, sequences = _sequential(record, gates, results, base)
    baseline = gates.recorded_baseline
    if gates.baseline is not None and base is not None:
        baseline = baseline_section(
            {"items": scored}, base, gates.max_regression,
            gates.allow_incomparable, gates.allow_partial,
        )  # fmt: skip
        _stopped_checks(baseline, record, sequences)
        base_speed = speed_stats(it.model_dump() for it in gates.baseline.items)
        # a stopped suite's speed is its first groups', the baseline's that of every item
        whole = {name: stats for name, stats in speed.items() if not _stopped(record, name)}
        baseline["max_slowdown"] = gates.max_slowdown
        baseline["speed"] = [
            c.model_dump() for c in speed_changes(whole, base_speed, gates.max_slowdown)
        ]
    refused = _refused(selection, gates)
    complete = _complete(record, refused, not_run)
    entries = _decide_gates(entries, record, selection, complete, refused)
    status, word, reasons = exit_status(record, selection, complete, refused, entries, baseline)
    return Verdict(status, word, reasons, complete, aggregates, entries, baseline, speed)
