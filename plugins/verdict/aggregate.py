"""Aggregate per-item scores into per-``suite/metric`` estimates with breakdowns."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from extractbench.plugins.verdict.stats import estimate

__all__ = ["aggregate", "metric_values"]


def _estimate_dict(values: list[float], groups: list[str]) -> dict[str, Any]:
    est = estimate(values, groups)
    return {
        "mean": est.mean,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "n": est.n,
        "ci_method": est.method,
        "groups": est.groups,
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

    The interval accounts for the items' groups (items sharing a prompt prefix:
    :func:`plugins.verdict.stats.estimate`): where a metric's items fall in fewer groups
    than items it is the clustered one (``ci_method`` ``wilson_deff`` or
    ``cluster_bootstrap``, ``groups`` their number); items each in their own group keep
    the independent-items interval (``groups`` None). Each breakdown level's interval
    counts the groups of that level's items.

    Args:
        items: item records with ``id`` (``suite/...``), ``scores`` (metric -> float or
            None; None and absent metrics are left out), ``meta`` (attribute -> value)
            and ``group`` (the group id; absent or empty: the item is its own group).
        breakdowns: suite -> names of ``meta`` attributes to break results down by
            (FDA: ``["key"]``); suites without an entry get none.

    Returns:
        ``{"fda/accuracy": {"mean", "ci_low", "ci_high", "n", "ci_method", "groups",
        "breakdowns": {"key": {"applicant": {...}, ...}}}}``, metrics sorted, levels
        sorted (numerically when numeric). Values are sorted by item id before
        estimating, so the result does not depend on the order items finished in
        (identical with and without xdist).
    """
    records = list(items)
    group_of = {record["id"]: record.get("group") or record["id"] for record in records}
    values = metric_values(records)
    result: dict[str, dict[str, Any]] = {}
    for key in sorted(values):
        rows = values[key]
        entry = _estimate_dict([v for _, v, _ in rows], [group_of[i] for i, _, _ in rows])
        attrs = breakdowns.get(key.split("/", 1)[0], ())
        if attrs:
            entry["breakdowns"] = {}
            for attr in attrs:
                levels: dict[str, tuple[list[float], list[str]]] = defaultdict(lambda: ([], []))
                for item_id, v, meta in rows:
                    level = levels[str(meta.get(attr))]
                    level[0].append(v)
                    level[1].append(group_of[item_id])
                entry["breakdowns"][attr] = {
                    level: _estimate_dict(*levels[level])
                    for level in sorted(levels, key=_level_order)
                }
        result[key] = entry
    return result
