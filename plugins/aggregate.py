"""Aggregate per-item scores into per-``suite/metric`` estimates with breakdowns."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from plugins.stats import estimate

__all__ = ["aggregate"]


def _estimate_dict(values: list[float]) -> dict[str, Any]:
    est = estimate(values)
    return {
        "mean": est.mean,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "n": est.n,
        "ci_method": est.method,
    }


def aggregate(
    items: Iterable[Mapping[str, Any]], breakdowns: Mapping[str, str]
) -> dict[str, dict[str, Any]]:
    """Mean, 95% CI and n per ``suite/metric``, with a breakdown by one item attribute.

    Args:
        items: item records with ``id`` (``suite/...``), ``scores`` (metric -> float; a
            missing metric is simply absent) and ``meta`` (attribute -> value).
        breakdowns: suite -> name of the ``meta`` attribute to break results down by
            (FDA: ``key``); suites without an entry get no breakdown.

    Returns:
        ``{"fda/accuracy": {"mean", "ci_low", "ci_high", "n", "ci_method",
        "breakdown": {"by": "key", "groups": {"applicant": {...}, ...}}}}``, keys sorted.
        Values are sorted by item id before estimating, so the result does not depend on
        the order items finished in (identical with and without xdist).
    """
    values: dict[str, list[tuple[str, float, Any]]] = defaultdict(list)
    for record in items:
        suite = record["id"].split("/", 1)[0]
        by = breakdowns.get(suite)
        level = record.get("meta", {}).get(by) if by else None
        for metric, value in record.get("scores", {}).items():
            if value is None:
                continue
            values[f"{suite}/{metric}"].append((record["id"], float(value), level))

    result: dict[str, dict[str, Any]] = {}
    for key in sorted(values):
        rows = sorted(values[key], key=lambda row: row[0])
        entry = _estimate_dict([v for _, v, _ in rows])
        by = breakdowns.get(key.split("/", 1)[0])
        if by:
            groups: dict[str, list[float]] = defaultdict(list)
            for _, v, level in rows:
                groups[str(level)].append(v)
            entry["breakdown"] = {
                "by": by,
                "groups": {level: _estimate_dict(vs) for level, vs in sorted(groups.items())},
            }
        result[key] = entry
    return result
