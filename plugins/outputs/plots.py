"""Plots of a run record (matplotlib, PNG): metric means with CIs, breakdown bars and the
distribution of item scores per suite."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plugins.outputs.record import RunRecord
from plugins.verdict.aggregate import metric_values

__all__ = ["metric_plots", "distribution_plot"]

MAX_LEVELS = 40  # a breakdown with more levels (e.g. table rows) is left to suite reports
MAX_PANELS = 12  # metrics per distribution figure


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


def metric_plots(record: RunRecord, folder: Path, stem: str) -> list[Path]:
    """One PNG of every metric's mean and CI, and one per suite/metric breakdown.

    Files: ``<stem>-metrics.png``, ``<stem>-<suite>-distribution.png`` (see
    :func:`distribution_plot`) and ``<stem>-<suite>-<metric>-by-<attr>.png`` (first
    breakdown attribute only, at most 40 levels).

    Returns:
        The written paths (none when the record has no aggregates).
    """
    aggregates = {k: a.model_dump() for k, a in record.aggregates.items()}
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
        f"run {record.run_id}: {record.model.get('name', '')}",
    )
    fig.tight_layout()
    path = folder / f"{stem}-metrics.png"
    fig.savefig(path)
    plt.close(fig)
    paths.append(path)
    for suite in sorted({key.split("/", 1)[0] for key in keys}):
        written = distribution_plot(record, suite, folder / f"{stem}-{suite}-distribution.png")
        paths += [written] if written else []
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


def distribution_plot(record: RunRecord, suite: str, path: Path) -> Path | None:
    """Histograms of the item scores of one suite, one panel per metric (at most 12).

    Scores in [0, 1] go into 10 bins of width 0.1 (a binary metric shows its two bars),
    others into 10 bins over their range; every panel says n and the mean. The values are
    those the aggregates are computed from (:func:`plugins.aggregate.metric_values`).

    Returns:
        ``path``, or None when the suite has no item scores.
    """
    prefix = f"{suite}/"
    values = {
        key[len(prefix) :]: [v for _, v, _ in rows]
        for key, rows in metric_values(it.model_dump() for it in record.items).items()
        if key.startswith(prefix)
    }
    metrics = sorted(values)[:MAX_PANELS]
    if not metrics:
        return None
    plt = _pyplot()
    cols = min(3, len(metrics))
    rows = -(-len(metrics) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.4 * rows + 0.6), dpi=100,
                             squeeze=False)  # fmt: skip
    for ax, metric in zip(axes.flat, metrics, strict=False):
        data = values[metric]
        unit = all(0.0 <= v <= 1.0 for v in data)
        bins = [i / 10 for i in range(11)] if unit else 10
        ax.hist(data, bins=bins, color="#4c72b0", edgecolor="white")
        ax.set_title(f"{metric} (n={len(data)}, mean {sum(data) / len(data):.3f})", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_ylabel("items", fontsize=7)
    for ax in list(axes.flat)[len(metrics) :]:
        ax.set_visible(False)
    fig.suptitle(f"{suite}: distribution of item scores", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
