"""From finished items to verdicts: aggregates, gates and the baseline comparison."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from plugins.aggregate import aggregate
from plugins.baseline import compare_records
from plugins.gates import Gate, evaluate_gates

__all__ = ["evaluate"]


def evaluate(
    items: Sequence[Mapping[str, Any]],
    suites: Mapping[str, Mapping[str, Any]],
    gates: Sequence[Gate],
    baseline: Mapping[str, Any] | None = None,
    max_regression: float | None = None,
) -> dict[str, Any]:
    """Aggregate the scored items and check gates and regressions.

    The same function serves a live run, ``--rescore`` and ``extractbench report``, so a
    record re-evaluated from its own items gives the same numbers.

    Args:
        items: item records; only ``outcome == "passed"`` ones are aggregated.
        suites: suite name -> suite info with ``breakdown`` (list of attributes).
        gates: gates to check.
        baseline: an earlier run record to compare with, or None.
        max_regression: tolerated drop per metric (see :func:`plugins.baseline.compare_records`).

    Returns:
        ``{"aggregates", "gates", "baseline"?}`` (JSON-safe).
    """
    scored = [it for it in items if it.get("outcome", "passed") == "passed"]
    breakdowns = {name: info.get("breakdown") or [] for name, info in suites.items()}
    aggregates = aggregate(scored, breakdowns)
    means = {key: agg["mean"] for key, agg in aggregates.items()}
    ran = {it["suite"] for it in scored}
    out: dict[str, Any] = {
        "aggregates": aggregates,
        "gates": [r.to_dict() for r in evaluate_gates(list(gates), means, ran)],
    }
    if baseline is not None:
        comparisons = compare_records({"items": scored}, baseline, max_regression)
        out["baseline"] = {
            "run_id": baseline.get("run_id", ""),
            "model": baseline.get("model", {}).get("name", ""),
            "max_regression": max_regression,
            "comparisons": [c.to_dict() for c in comparisons],
        }
    return out
