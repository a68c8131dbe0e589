"""Aggregate per-item scores into per-``suite/metric`` estimates with breakdowns."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from extractbench.plugins.verdict.stats import estimate

__all__ = ["aggregate", "metric_values"]


def _estimate_dict(values: list[float]) -> dict[str, Any]:
    est = estimate(values)
    return {
        "mean": est.mean,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "n": est.n,
        "ci_method": est.method,
    }


def _level_order(level: str) -> tuple[int, float, str]:
    try:
        return (0, float(level), level)
    except ValueError:
        return (1, 0.0, level)


def metric_values(
    items: Iterable[Mapping[str, Any]],
) -> dict[str, list[tuple[str, float, Mapping[str, Any]]]]:
    """Item values per ``suite/metric``: ``[(item id, value, meta), ...]`` sorted by item
    id (so nothing depends on the order items finished in). The suite is the id's first
    segment; None and absent scores are left out."""
    values: dict[str, list[tuple[str, float, Mapping[str, Any]]]] = defaultdict(list)
    for record in items:
        suite = record["id"].split("/", 1)[0]
        for metric, value in record.get("scores", {}).items():
            if value is not None:
                values[f"{suite}/{metric}"].append(
                    (record["id"], float(value), record.get("meta", {}))
                )
    return {key: sorted(rows, key=lambda row: row[0]) for key, rows in values.items()}


def aggregate(
    items: Iterable[Mapping[str, Any]], breakdowns: Mapping[str, Sequence[str]]
) -> dict[str, dict[str, Any]]:
    """Mean, 95% CI and n per ``suite/metric``, with breakdowns by item attributes.

    Args:
        items: item records with ``id`` (``suite/...``), ``scores`` (metric -> float or
            None; None and absent metrics are left out) and ``meta`` (attribute -> value).
        breakdowns: suite -> names of ``meta`` attributes to break results down by
            (FDA: ``["key"]``); suites without an entry get none.

    Returns:
        ``{"fda/accuracy": {"mean", "ci_low", "ci_high", "n", "ci_method",
        "breakdowns": {"key": {"applicant": {...}, ...}}}}``, metrics sorted, levels
        sorted (numerically when numeric). Values are sorted by item id before
        estimating, so the result does not depend on the order items finished in
        (identical with and without xdist).
    """
    values = metric_values(items)
    result: dict[str, dict[str, Any]] = {}
    for key in sorted(values):
        rows = values[key]
        entry = _estimate_dict([v for _, v, _ in rows])
        attrs = breakdowns.get(key.split("/", 1)[0], ())
        if attrs:
            entry["breakdowns"] = {}
            for attr in attrs:
                groups: dict[str, list[float]] = defaultdict(list)
                for _, v, meta in rows:
                    groups[str(meta.get(attr))].append(v)
                entry["breakdowns"][attr] = {
                    level: _estimate_dict(groups[level])
                    for level in sorted(groups, key=_level_order)
                }
        result[key] = entry
    return result
