"""Plots of a run record (matplotlib, PNG): metric means with CIs (one chart per scale),
breakdown bars where the levels hold enough items, and the distribution of item scores
per suite. No chart is drawn from fewer than ``MIN_PLOT_N`` items: a metric of fewer is
a row of the HTML page's tables only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from extractbench.plugins.outputs.metric_facts import MIN_PLOT_N, MetricFacts, Scale
from extractbench.plugins.record import RunRecord
from extractbench.plugins.verdict.aggregate import metric_values
from extractbench.suites.figures import fit_title, pyplot

__all__ = ["metric_plots", "distribution_plot"]

MAX_LEVELS = 40  # a breakdown with more levels (e.g. table rows) is left to suite reports
MIN_CHART_N = 5  # a breakdown level with fewer items is a table row, not a bar
MAX_PANELS = 12  # metrics per distribution figure


def _bars(
    ax: Any, labels: list[str], stats: Sequence[Mapping[str, Any]], title: str, scale: Scale
) -> None:
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
    ax.set_xlabel(f"mean, 95% CI ({scale.label})")
    # centred on the figure, wrapped to its width: the axes is narrower by the labels
    ax.figure.suptitle(fit_title(title, ax.figure.get_figwidth() * 0.95, 10), fontsize=10)
    low = min([scale.low] + [s["ci_low"] for s in stats])
    high = max([scale.high or 0.0] + [s["ci_high"] for s in stats]) or 1.0
    ax.set_xlim(low, high * 1.02)


def _save(plt: Any, fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _chartable(levels: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether a breakdown is worth a chart: 2 to 40 levels, each with at least
    :data:`MIN_CHART_N` items (smaller ones are a table in the HTML page)."""
    return 2 <= len(levels) <= MAX_LEVELS and all(s["n"] >= MIN_CHART_N for s in levels.values())


def metric_plots(
    record: RunRecord, folder: Path, stem: str, facts: MetricFacts | None = None
) -> list[Path]:
    """The run's charts: every metric's mean and CI, one chart per scale; the item scores'
    distribution per suite; each metric by its first breakdown attribute when that is
    worth a chart (:func:`_chartable`); only metrics of at least :data:`MIN_PLOT_N` items.

    Files: ``<stem>-metrics-<scale>.png`` (``unit``, ``0-100``, ``count``...: the scales
    of :func:`plugins.outputs.metric_facts.scale_of`, so a 0-1 score and a 0-100 SacreBLEU
    never share an axis), ``<stem>-<suite>-distribution.png`` (see
    :func:`distribution_plot`) and ``<stem>-<suite>-<metric>-by-<attr>.png``.

    Args:
        facts: each metric's scale and self-judged mark (none given: all on 0-1).

    Returns:
        The written paths (none when the record has no aggregates).
    """
    facts = facts or MetricFacts()
    aggregates = {k: a.model_dump() for k, a in record.aggregates.items() if a.n >= MIN_PLOT_N}
    if not aggregates:
        return []
    plt = pyplot()
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    by_scale: dict[str, list[str]] = {}
    for key in aggregates:
        by_scale.setdefault(facts.scale(key).key, []).append(key)
    model = record.model.get("name", "")
    for keys in by_scale.values():
        scale = facts.scale(keys[0])
        labels = [f"{k} [SELF-JUDGED]" if k in facts.self_judged else k for k in keys]
        fig, ax = plt.subplots(figsize=(8, 0.45 * len(keys) + 1.4), dpi=100)
        stats = [aggregates[k] for k in keys]
        _bars(ax, labels, stats, f"{model}: {scale.label}\nrun {record.run_id}", scale)
        paths.append(_save(plt, fig, folder / f"{stem}-metrics-{scale.key}.png"))
    for suite in sorted({key.split("/", 1)[0] for key in aggregates}):
        written = distribution_plot(record, suite, folder / f"{stem}-{suite}-distribution.png")
        paths += [written] if written else []
    for key, agg in aggregates.items():
        attr, levels = next(iter((agg.get("breakdowns") or {}).items()), ("", {}))
        if not _chartable(levels):
            continue
        labels = list(levels)
        fig, ax = plt.subplots(figsize=(8, 0.35 * len(labels) + 1.4), dpi=100)
        mark = " [SELF-JUDGED]" if key in facts.self_judged else ""
        _bars(ax, labels, [levels[x] for x in labels], f"{key}{mark} by {attr}", facts.scale(key))
        name = f"{stem}-{key.replace('/', '-')}-by-{attr}.png"
        paths.append(_save(plt, fig, folder / name))
    return paths


def distribution_plot(record: RunRecord, suite: str, path: Path) -> Path | None:
    """Histograms of the item scores of one suite, one panel per metric of at least
    :data:`MIN_PLOT_N` items (at most 12).

    Scores in [0, 1] go into 10 bins of width 0.1 (a binary metric shows its two bars),
    others into 10 bins over their range; every panel says n and the mean. The values are
    those the aggregates are computed from (:func:`plugins.verdict.aggregate.metric_values`).

    Returns:
        ``path``, or None when no metric of the suite has enough item scores.
    """
    prefix = f"{suite}/"
    values = {
        key[len(prefix) :]: [v for _, v, _ in rows]
        for key, rows in metric_values(it.model_dump() for it in record.items).items()
        if key.startswith(prefix) and len(rows) >= MIN_PLOT_N
    }
    metrics = sorted(values)[:MAX_PANELS]
    if not metrics:
        return None
    plt = pyplot()
    cols = min(3, len(metrics))
    rows = -(-len(metrics) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.4 * rows + 0.6), dpi=100,
                             squeeze=False)  # fmt: skip
    for ax, metric in zip(axes.flat, metrics, strict=False):
        data = values[metric]
        unit = all(0.0 <= v <= 1.0 for v in data)
        bins = [i / 10 for i in range(11)] if unit else 10
        ax.hist(data, bins=bins, color="#4c72b0", edgecolor="white")
        title = f"{metric} (n={len(data)}, mean {sum(data) / len(data):.3f})"
        ax.set_title(fit_title(title, 3.0, 8), fontsize=8)
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
