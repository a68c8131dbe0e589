"""Plots of a run record (matplotlib, PNG): metric means with CIs (one chart per scale),
breakdown bars where the levels hold enough items, and the distribution of item scores
per suite. No chart is drawn from fewer than ``MIN_PLOT_N`` items: a metric of fewer is
a row of the HTML page's tables only. After ``--stop-when-decided`` stopped a suite, its
bars are labelled as the scores table labels them: the mean marked as a stopped estimate
(``†``), its bar the anytime-valid bounds (a breakdown level's bar none), the axis headed
``interval`` with the tables' legend instead of ``95% CI``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from extractbench.plugins.outputs.early_stop_report import (
    STOPPED_LEGEND,
    STOPPED_MARK,
    any_stopped,
    interval_head,
)
from extractbench.plugins.outputs.metric_facts import MIN_PLOT_N, MetricFacts, Scale
from extractbench.plugins.record import Aggregate, RunRecord
from extractbench.plugins.verdict.aggregate import metric_values
from extractbench.plugins.verdict.sequential_gates import ANYTIME
from extractbench.suites.figures import fit_title, pyplot

__all__ = ["metric_plots", "distribution_plot"]

MAX_LEVELS = 40  # a breakdown with more levels (e.g. table rows) is left to suite reports
MIN_CHART_N = 5  # a breakdown level with fewer items is a table row, not a bar
MAX_PANELS = 12  # metrics per distribution figure
LEGEND_SIZE = 7  # points: the stopped-estimate legend under a chart's axis
LEGEND_WIDTH = 0.5  # of the figure's width: the axis it is centred under, after the labels


def _interval(agg: Aggregate) -> tuple[float, float] | None:
    """The bounds a bar draws: the 95% CI; after a stop the anytime-valid bounds, or none
    where the record keeps the fixed-n numbers only (a breakdown level, a metric without a
    finite range), as the tables show none."""
    if agg.stopped_early and agg.ci_method != ANYTIME:
        return None
    return agg.ci_low, agg.ci_high


def _axis_label(rows: Mapping[str, Aggregate], scale: Scale, width_in: float) -> str:
    """A chart's axis label: ``mean, 95% CI (scale)``; where a bar is a stopped estimate,
    the tables' header (``mean, interval``) and their legend
    (:data:`plugins.outputs.early_stop_report.STOPPED_LEGEND`), wrapped to ``width_in``
    inches at :data:`LEGEND_SIZE` points.

    Args:
        rows: the charted bars (label -> aggregate).
        scale: the chart's scale; width_in: the width the legend may take, in inches.
    """
    head = f"mean, {interval_head(rows)} ({scale.label})"
    if not any_stopped(rows):
        return head
    return f"{head}\n{fit_title(STOPPED_LEGEND, width_in, LEGEND_SIZE)}"


def _bars(ax: Any, rows: Mapping[str, Aggregate], title: str, scale: Scale) -> None:
    """One horizontal bar per row (label -> aggregate), top to bottom: its mean, its interval
    (:func:`_interval`) as the error bar, the label with n and a stopped estimate's mark."""
    means = [a.mean for a in rows.values()]
    shown = [_interval(a) for a in rows.values()]
    # NaN: no error bar at all (a zero-length one would still draw its caps)
    lower = [
        math.nan if b is None else max(0.0, m - b[0]) for m, b in zip(means, shown, strict=True)
    ]
    upper = [
        math.nan if b is None else max(0.0, b[1] - m) for m, b in zip(means, shown, strict=True)
    ]
    ax.barh(range(len(rows)), means, xerr=[lower, upper], color="#4c72b0", ecolor="#333", capsize=2)
    mark = {True: f" {STOPPED_MARK}", False: ""}
    ax.set_yticks(
        range(len(rows)),
        [f"{lab} (n={a.n}){mark[a.stopped_early]}" for lab, a in rows.items()],
        fontsize=8,
    )
    ax.invert_yaxis()
    fig = ax.figure
    label = _axis_label(rows, scale, fig.get_figwidth() * LEGEND_WIDTH)
    if "\n" in label:  # room for the legend's lines, so the bars keep their height
        lines = label.count("\n")
        fig.set_figheight(fig.get_figheight() + lines * LEGEND_SIZE * 1.3 / 72)
    ax.set_xlabel(label, fontsize=LEGEND_SIZE if "\n" in label else None)
    # centred on the figure, wrapped to its width: the axes is narrower by the labels
    fig.suptitle(fit_title(title, fig.get_figwidth() * 0.95, 10), fontsize=10)
    bounds = [b for b in shown if b is not None]
    low = min([scale.low, *means] + [low for low, _ in bounds])
    high = max([scale.high or 0.0, *means] + [high for _, high in bounds]) or 1.0
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
        rows = {
            f"{k} [SELF-JUDGED]" if k in facts.self_judged else k: record.aggregates[k]
            for k in keys
        }
        fig, ax = plt.subplots(figsize=(8, 0.45 * len(keys) + 1.4), dpi=100)
        _bars(ax, rows, f"{model}: {scale.label}\nrun {record.run_id}", scale)
        paths.append(_save(plt, fig, folder / f"{stem}-metrics-{scale.key}.png"))
    for suite in sorted({key.split("/", 1)[0] for key in aggregates}):
        written = distribution_plot(record, suite, folder / f"{stem}-{suite}-distribution.png")
        paths += [written] if written else []
    for key, agg in aggregates.items():
        attr, levels = next(iter((agg.get("breakdowns") or {}).items()), ("", {}))
        if not _chartable(levels):
            continue
        fig, ax = plt.subplots(figsize=(8, 0.35 * len(levels) + 1.4), dpi=100)
        mark = " [SELF-JUDGED]" if key in facts.self_judged else ""
        rows = (record.aggregates[key].breakdowns or {})[attr]
        _bars(ax, rows, f"{key}{mark} by {attr}", facts.scale(key))
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
