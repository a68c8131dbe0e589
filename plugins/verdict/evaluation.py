"""From finished items to verdicts: aggregates, gates and the baseline comparison."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plugins.verdict.aggregate import aggregate
from plugins.verdict.baseline import baseline_section
from plugins.verdict.gates import Gate, evaluate_gates

__all__ = ["evaluate", "selected_suites", "leave_undecided"]


def selected_suites(
    items: Sequence[Mapping[str, Any]], suites: Mapping[str, Mapping[str, Any]]
) -> set[str]:
    """Suites this run selected: items were collected for them after ``-k``/``-m``, or
    items of theirs are in the record."""
    chosen = {name for name, info in suites.items() if (info.get("items_selected") or 0) > 0}
    return chosen | {it["suite"] for it in items if "suite" in it}


def evaluate(
    items: Sequence[Mapping[str, Any]],
    suites: Mapping[str, Mapping[str, Any]],
    gates: Sequence[Gate],
    baseline: Mapping[str, Any] | None = None,
    max_regression: float | None = None,
    *,
    skipped: Mapping[str, str] | None = None,
    unloaded: Mapping[str, str] | None = None,
    allow_incomparable: bool = False,
) -> dict[str, Any]:
    """Aggregate the scored items and check gates and regressions.

    The same function serves a live run and ``--rescore``, so a record re-evaluated from
    its own items gives the same numbers.

    Args:
        items: item records; only ``outcome == "passed"`` ones are aggregated.
        suites: suite name -> suite info with ``breakdown`` (list of attributes) and
            ``items_selected``.
        gates: gates to check.
        baseline: an earlier run record to compare with, or None.
        max_regression: tolerated drop per metric (see :func:`plugins.baseline.compare_records`).
        skipped: suite -> reason, for suites skipped with ``--skip-missing-data``.
        unloaded: suite -> the error that stopped its data from loading.
        allow_incomparable: a baseline sharing no item does not fail the run.

    Returns:
        ``{"aggregates", "gates", "baseline"?}`` (JSON-safe).
    """
    scored = [it for it in items if it.get("outcome", "passed") == "passed"]
    breakdowns = {name: info.get("breakdown") or [] for name, info in suites.items()}
    aggregates = aggregate(scored, breakdowns)
    means = {key: agg["mean"] for key, agg in aggregates.items()}
    failed: dict[str, int] = {}
    for it in items:
        if it.get("outcome", "passed") != "passed":
            failed[it["suite"]] = failed.get(it["suite"], 0) + 1
    out: dict[str, Any] = {
        "aggregates": aggregates,
        "gates": [
            r.to_dict()
            for r in evaluate_gates(
                list(gates),
                means,
                selected_suites(items, suites),
                dict(skipped or {}),
                failed,
                dict(unloaded or {}),
            )
        ],
    }
    if baseline is not None:
        out["baseline"] = baseline_section(
            {"items": items}, baseline, max_regression, allow_incomparable
        )
    return out


def leave_undecided(
    gates: Sequence[dict[str, Any]], why: str, *, decided_only: bool = False
) -> None:
    """Mark every gate result not evaluated (``passed`` None), saying ``why``: a partial
    run (interrupted) or one shard of a run decides nothing. ``decided_only``: a gate
    that was not evaluated anyway keeps its own reason (its data did not load, say)."""
    for gate in gates:
        if not decided_only or gate["passed"] is not None:
            gate.update(passed=None, reason=f"not evaluated: {why} ({gate['reason']})")
