"""The exit status and the verdict's word of a decided run (``plugins.verdict.decide``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from extractbench.plugins.record import GateEntry, RunRecord, Selection
from extractbench.plugins.verdict.exit_codes import (
    CRASHED,
    FAILED,
    INTERNAL_ERROR,
    INTERRUPTED,
    NOTHING_MEASURED,
    OK,
    OUTPUT_ERROR,
    USAGE_ERROR,
)
from extractbench.plugins.verdict.gates import short_of_n, unanswered
from extractbench.plugins.verdict.speed import change_text

__all__ = ["exit_status", "shard_line"]


def _item_failures(record: RunRecord) -> list[str]:
    failed = [it for it in record.items if it.outcome != "passed"]
    if not failed:
        return []
    error = str(failed[0].error or "no message").splitlines()[0]
    return [f"{len(failed)} of {len(record.items)} items failed: {failed[0].id}: {error}"]


def exit_status(
    record: RunRecord,
    selection: Selection,
    complete: bool,
    refused: list[str],
    gates: Sequence[GateEntry],
    baseline: dict[str, Any] | None,
) -> tuple[int, str, list[str]]:
    """The exit status, the verdict's word and its reasons, from the record's facts and the
    decided gates and baseline checks.

    In order: usage errors (4); a pytest internal error (3, never hidden by what the
    items say); an interruption (2, INCOMPLETE); a crash (7, CRASHED); lost outputs (6);
    then failed items, failed plain tests, a refused subset, an incomplete or stopped run,
    failed gates, regression and speed checks, gates not decided for want of n or declared
    gates not evaluated (:func:`plugins.verdict.gates.unanswered`) (1: INCOMPLETE when
    incomplete or only such gates are open, else FAIL);
    nothing measured (5); a complete shard (0, SHARD: :func:`shard_line`); any other gate
    not evaluated (1, INCOMPLETE: a PASS never holds one); else PASS (0)."""
    if record.usage_errors:
        return USAGE_ERROR, "FAIL", list(record.usage_errors)
    if record.pytest_exit_status == INTERNAL_ERROR:
        return INTERNAL_ERROR, "FAIL", ["pytest stopped with an internal error"]
    if record.interrupted:
        return (
            INTERRUPTED,
            "INCOMPLETE",
            [f"interrupted by {record.interrupted}; gates not decided"],
        )
    outputs = list(record.output_errors)
    crashes = [
        c.message or f"worker {c.worker} crashed while running {c.item}" for c in record.crashes
    ]
    if crashes:
        if outputs:
            return OUTPUT_ERROR, "FAIL", outputs + crashes
        return CRASHED, "CRASHED", [*crashes, "gates not decided"]
    reasons: list[str] = []
    if refused:
        dropped = ", ".join(f"{selection.deselected[s]} of {s}" for s in refused)
        reasons.append(
            f"a subset ran: -k, -m, --deselect or --lf left out {dropped}'s items; gates not "
            "decided (--allow-subset decides on the subset)"
        )
    if record.stopped:
        reasons.append(f"run stopped: {record.stopped}")
    reasons += _item_failures(record)
    others = sorted(
        {*record.other_failures, *(t.nodeid for t in record.other_tests if t.outcome == "failed")}
    )
    if others:
        reasons.append(f"{len(others)} other tests failed: {others[0]}")
    counts = record.counts
    if not complete and counts.items < counts.expected:
        reasons.append(f"{counts.items} of {counts.expected} selected items finished")
    elif not complete and not reasons:
        reasons.append("the run is incomplete")
    reasons += [f"gate {g.expression} failed: {g.reason}" for g in gates if g.passed is False]
    if baseline is not None:
        if baseline["failed"]:
            reasons.append(f"baseline {baseline['reason']}")
        reasons += [
            f"regression check {c['metric']} failed: {c['verdict']}"
            for c in baseline["comparisons"]
            if c["failed"]
        ]
        reasons += [
            f"speed check {c['metric']} failed: {change_text(c)} than the baseline, "
            f"beyond --max-slowdown {baseline.get('max_slowdown')}"
            for c in baseline.get("speed", [])
            if c["failed"]
        ]
    if outputs:
        return OUTPUT_ERROR, "FAIL", outputs + reasons
    if not counts.items and not reasons:
        skipped = sorted(selection.skipped)
        why = f" (skipped: {', '.join(skipped)})" if skipped else ""
        return NOTHING_MEASURED, "NOT EVALUATED", [f"no item was measured{why}"]
    short = [f"gate {g.expression} {g.reason}" for g in gates if short_of_n(g)]
    left_out = (
        "; select the gate's suite too, or pass --allow-subset to leave it out"
        if selection.narrow
        else "; a run of the whole suites package answers every declared gate: add the "
        "suite's path to the command, or select suites by name"
    )
    short += [
        f"gate {g.expression} {g.reason}" + (left_out if g.not_evaluated == "not_selected" else "")
        for g in gates
        if unanswered(g, selection.gates_may_be_left_out)
    ]
    if reasons or short:
        undecided = not complete or (short and not reasons)
        return FAILED, "INCOMPLETE" if undecided else "FAIL", reasons + short
    if selection.shard:
        return OK, "SHARD", [shard_line(selection.shard)]
    open_ = [
        f"gate {g.expression} {g.reason}"
        for g in gates
        if g.passed is None
        and not (g.not_evaluated == "not_selected" and selection.gates_may_be_left_out)
    ]
    if open_:  # a PASS never holds a gate it did not evaluate
        return FAILED, "INCOMPLETE", open_
    return OK, "PASS", []


def shard_line(shard: str) -> str:
    """What a complete shard says instead of PASS: its exit is 0 (a CI matrix's job
    succeeds), but it decides no gate: ``extractbench merge`` of the shards' records does."""
    count = shard.partition("/")[2]
    return (
        f"shard {shard} complete: not a release decision; merge the {count} records "
        "(extractbench merge) and gate on that"
    )
