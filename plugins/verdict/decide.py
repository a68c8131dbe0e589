"""The release decision: one function of the run record, used by every report.

The terminal summary, the JUnit file, the markdown and HTML reports and ``extractbench
report`` all print what :func:`verdict` says, so a record read later gives the exit
status and the words of the run that wrote it. The README's exit-code table is
:data:`EXIT_CODES`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Verdict",
    "verdict",
    "EXIT_CODES",
    "OK",
    "FAILED",
    "INTERRUPTED",
    "INTERNAL_ERROR",
    "USAGE_ERROR",
    "NOTHING_MEASURED",
    "OUTPUT_ERROR",
    "CRASHED",
]

OK, FAILED, INTERRUPTED, INTERNAL_ERROR, USAGE_ERROR, NOTHING_MEASURED, OUTPUT_ERROR, CRASHED = (
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
)
EXIT_CODES: dict[int, str] = {
    OK: "PASS: every selected item scored, every evaluated gate and regression check passed, "
    "the run record written",
    FAILED: "FAIL or INCOMPLETE: a gate or regression check failed, an item failed, a selected "
    "suite scored nothing, the baseline shares no item, or the run was stopped (circuit "
    "breaker)",
    INTERRUPTED: "INCOMPLETE: interrupted by Ctrl-C (SIGINT) or SIGTERM; the record holds the "
    "finished items",
    INTERNAL_ERROR: "FAIL: pytest internal error (a plugin or hook crashed)",
    USAGE_ERROR: "usage error: bad option or gate, missing or malformed data, a suite with no "
    "items, a model that does not load, an unreadable record or cache",
    NOTHING_MEASURED: "NOT EVALUATED: nothing was measured (no test collected, or every "
    "selected suite skipped with --skip-missing-data)",
    OUTPUT_ERROR: "FAIL: the run record or the markdown summary could not be written",
    CRASHED: "CRASHED: a process running items died from a signal (a segfault in native "
    "code, an out-of-memory kill); the record names the item, the signal and the top frame, "
    "the other items ran on; gates not decided",
}


@dataclass(frozen=True)
class Verdict:
    """What a run decided.

    Attributes:
        status: the process exit status (see :data:`EXIT_CODES`).
        word: ``PASS``, ``FAIL``, ``NOT EVALUATED``, ``INCOMPLETE`` or ``CRASHED``.
        reasons: one line per reason the run did not pass (empty on PASS).
    """

    status: int
    word: str
    reasons: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """True only for PASS (exit status 0)."""
        return self.status == OK

    def headline(self) -> str:
        """``PASS`` or e.g. ``FAIL (exit 1): gate fda/accuracy>=0.5 failed``."""
        if self.passed:
            return "PASS"
        return f"{self.word} (exit {self.status}): " + "; ".join(self.reasons[:3])


def _item_failures(record: Mapping[str, Any]) -> list[str]:
    items = record.get("items", [])
    failed = [it for it in items if it.get("outcome", "passed") != "passed"]
    if not failed:
        return []
    first = failed[0]
    error = str(first.get("error") or "no message").splitlines()[0]
    return [f"{len(failed)} of {len(items)} items failed: {first.get('id')}: {error}"]


def verdict(record: Mapping[str, Any]) -> Verdict:
    """Decide a run from its record alone.

    In order: usage errors found during the run (exit 4); a pytest internal error (exit
    3, never hidden by what the items say); an interruption by signal
    (exit 2, INCOMPLETE); a process that died from a signal while running an item
    (exit 7, CRASHED); outputs that could not be written (exit 6); nothing measured
    (exit 5, NOT EVALUATED, also a ``--shard`` that holds no item: its record still
    merges); then failed items, failed tests that are not items (a plain
    test collected beside the suites), an incomplete run, a stopped run,
    failed gates and failed regression checks (exit 1: INCOMPLETE when the run is
    incomplete, else FAIL); else PASS (exit 0).

    Args:
        record: a run record (``plugins.outputs.record``); fields it lacks count as empty.

    Returns:
        The :class:`Verdict`.
    """
    usage = list(record.get("usage_errors") or [])
    if usage:
        return Verdict(USAGE_ERROR, "FAIL", usage)
    if record.get("pytest_exit_status") == INTERNAL_ERROR:
        return Verdict(INTERNAL_ERROR, "FAIL", ["pytest stopped with an internal error"])
    complete = bool(record.get("complete", False))
    if record.get("interrupted"):
        return Verdict(
            INTERRUPTED,
            "INCOMPLETE",
            [f"interrupted by {record['interrupted']}; gates not decided"],
        )
    crashes = [
        crash.get("message")
        or f"worker {crash.get('worker')} crashed while running {crash.get('item')}"
        for crash in record.get("crashes") or []
    ]
    outputs = list(record.get("output_errors") or [])
    if crashes:
        if outputs:
            return Verdict(OUTPUT_ERROR, "FAIL", outputs + crashes)
        return Verdict(CRASHED, "CRASHED", [*crashes, "gates not decided"])
    reasons: list[str] = []
    subset = record.get("subset") or {}
    if subset and not subset.get("allowed"):
        dropped = ", ".join(f"{n} of {s}" for s, n in sorted(subset["items_deselected"].items()))
        reasons.append(
            f"a subset ran: -k, -m, --deselect or --lf left out {dropped}'s items; gates not "
            "decided (--allow-subset decides on the subset)"
        )
    if record.get("stopped"):
        reasons.append(f"run stopped: {record['stopped']}")
    reasons += _item_failures(record)
    others = record.get("other_failures") or []
    if others:
        reasons.append(f"{len(others)} other tests failed: {others[0]}")
    counts = record.get("counts", {})
    if not complete and counts.get("items", 0) < counts.get("expected", 0):
        reasons.append(
            f"{counts.get('items', 0)} of {counts.get('expected', 0)} selected items finished"
        )
    elif not complete and not reasons:
        reasons.append("the run is incomplete")
    for gate in record.get("gates", []):
        if gate.get("passed") is False:
            reasons.append(f"gate {gate['expression']} failed: {gate.get('reason', '')}")
    if record.get("baseline", {}).get("failed"):
        reasons.append(f"baseline {record['baseline'].get('reason', '')}")
    for c in record.get("baseline", {}).get("comparisons", []):
        if c.get("failed"):
            reasons.append(f"regression check {c['metric']} failed: {c.get('verdict', '')}")
    if outputs:
        return Verdict(OUTPUT_ERROR, "FAIL", outputs + reasons)
    if not counts.get("items", 0) and not reasons:
        skipped = sorted(record.get("suites_skipped") or {})
        why = f" (skipped: {', '.join(skipped)})" if skipped else ""
        return Verdict(NOTHING_MEASURED, "NOT EVALUATED", [f"no item was measured{why}"])
    if reasons:
        return Verdict(FAILED, "FAIL" if complete else "INCOMPLETE", reasons)
    return Verdict(OK, "PASS")
