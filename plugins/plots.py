"""Plots of a run record (matplotlib, PNG): metric means with CIs and breakdown bars."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["metric_plots"]

MAX_LEVELS = 40  # a breakdown with more levels (e.g. table rows) is left to suite reports


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _bars(ax: Any, labels: list[str], stats: list[Mapping[str, Any]], title: str) -> None:
    means = [s["mean"] for s in stats]
    lower = [max(0.0, s["mean"] - s["ci_low"]) for s in stats]
    upper = [max(0.0, s["ci_high"] - s["mean"]) for s in stats]
    ax.barh(
        range(len(labels)), means, xerr=[lower, upper], color="#4c72b0", ecolor="#333", capsize=2
    )
    ax.set_yticks(
        range(len(labels)),
        [f"{lab} (n={s['n']})" for lab, s in zip(labels, stats, strict=True)],
        fontsize=8,
    )
    ax.invert_yaxis()
    ax.set_xlabel("mean score, 95% CI")
    ax.set_title(title, fontsize=10)
    top = max([1.0] + [s["ci_high"] for s in stats])
    ax.set_xlim(0, top * 1.02)


def metric_plots(record: Mapping[str, Any], folder: Path, stem: str) -> list[Path]:
    """One PNG of every metric's mean and CI, and one per suite/metric breakdown.

    Files: ``<stem>-metrics.png`` and ``<stem>-<suite>-<metric>-by-<attr>.png`` (first
    breakdown attribute only, at most 40 levels).

    Returns:
        The written paths (none when the record has no aggregates).
    """
    aggregates = record.get("aggregates", {})
    if not aggregates:
        return []
    plt = _pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    keys = list(aggregates)
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(keys) + 1.4), dpi=100)
    _bars(
        ax,
        keys,
        [aggregates[k] for k in keys],
        f"run {record.get('run_id', '')}: {record.get('model', {}).get('name', '')}",
    )
    fig.tight_layout()
    path = folder / f"{stem}-metrics.png"
    fig.savefig(path)
    plt.close(fig)
    paths.append(path)
    for key, agg in aggregates.items():
        breakdowns = agg.get("breakdowns") or {}
        if not breakdowns:
            continue
        attr, levels = next(iter(breakdowns.items()))
        if len(levels) > MAX_LEVELS:
            continue
        labels = list(levels)
        fig, ax = plt.subplots(figsize=(8, 0.35 * len(labels) + 1.4), dpi=100)
        _bars(ax, labels, [levels[lab] for lab in labels], f"{key} by {attr}")
        fig.tight_layout()
        path = folder / f"{stem}-{key.replace('/', '-')}-by-{attr}.png"
        fig.savefig(path)
        plt.close(fig)
        paths.append(path)
    return paths
