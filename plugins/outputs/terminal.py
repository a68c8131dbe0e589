"""The score table printed after a run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["score_table"]


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def score_table(
    aggregates: Mapping[str, Mapping[str, Any]], gates: Sequence[Mapping[str, Any]]
) -> list[str]:
    """Lines of a fixed-width table: suite, metric, mean, 95% CI, n, gate verdict.

    Each metric row is followed by indented rows for the levels of the suite's first
    breakdown attribute (FDA: one row per key), when it has more than one level. Gates whose metric is absent from ``aggregates`` get a row of their own.

    Args:
        aggregates: ``suite/metric`` -> aggregate dict (see :func:`plugins.aggregate.aggregate`).
        gates: gate results as in the run record (``metric``, ``expression``, ``passed``).
    """
    by_metric: dict[str, list[Mapping[str, Any]]] = {}
    for gate in gates:
        by_metric.setdefault(gate["metric"], []).append(gate)

    def verdict(metric: str) -> str:
        parts = []
        for gate in by_metric.get(metric, []):
            word = {True: "PASS", False: "FAIL", None: "NOT EVALUATED"}[gate["passed"]]
            parts.append(f"{word} {gate['op']}{gate['threshold']:g}")
        return ", ".join(parts)

    rows: list[tuple[str, ...]] = [("suite", "metric", "mean", "95% CI", "n", "gate")]
    for key, agg in aggregates.items():
        suite, metric = key.split("/", 1)
        ci = f"[{_fmt(agg['ci_low'])}, {_fmt(agg['ci_high'])}]"
        rows.append((suite, metric, _fmt(agg["mean"]), ci, str(agg["n"]), verdict(key)))
        breakdowns = agg.get("breakdowns") or {}
        by, levels = next(iter(breakdowns.items()), ("", {}))  # the suite's first attribute
        if len(levels) > 1:
            for level, sub in levels.items():
                sub_ci = f"[{_fmt(sub['ci_low'])}, {_fmt(sub['ci_high'])}]"
                rows.append(("", f"  {by}={level}", _fmt(sub["mean"]), sub_ci, str(sub["n"]), ""))
    for metric in by_metric:
        if metric not in aggregates:
            suite, name = metric.split("/", 1) if "/" in metric else (metric, "")
            rows.append((suite, name, "-", "-", "0", verdict(metric)))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines
