"""Table-QA report: the article's results table and its two heatmaps per subset.

Article ("Method" and "Results"): accuracy per subset (wiki, gost, syn1-syn5) and their
average; heatmaps W x r (table width by answer row) and W x (q - t) (width by column
distance), the latter folded into one square matrix: cell (i, j) above the diagonal
(i < j) holds width j and distance +i (question column right of the answer column);
below the diagonal (i > j) width i and distance -j.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from extractbench.suites.figures import cell_text_colour, fit_title, pyplot
from extractbench.suites.tableqa import article
from extractbench.suites.tableqa.metrics import MATCH_METRICS
from extractbench.suites.tableqa.subsets import LOOKUP_SUBSETS

__all__ = [
    "results_table",
    "article_comparison",
    "heatmap_w_r",
    "heatmap_w_d",
    "summary_lines",
    "write_artifacts",
]

MAX_WIDTH, MAX_ROW = 16, 64


def _scored(items: Iterable[Mapping[str, Any]], metric: str) -> list[Mapping[str, Any]]:
    return [
        it
        for it in items
        if it.get("suite") == "tableqa" and it.get("scores", {}).get(metric) is not None
    ]


def results_table(
    items: Iterable[Mapping[str, Any]], metric: str = "exact_match"
) -> dict[str, Any]:
    """Accuracy per subset in percent and their unweighted average (the article's table).

    Returns:
        ``{"subsets": {"wiki": {"accuracy_pct": 63.0, "n": 100}, ...}, "average_pct": ...}``;
        subsets without questions are left out of the average.
    """
    by_subset: dict[str, list[float]] = defaultdict(list)
    for it in _scored(items, metric):
        by_subset[it["meta"]["subset"]].append(float(it["scores"][metric]))
    subsets = {
        s: {"accuracy_pct": 100 * sum(v) / len(v), "n": len(v)}
        for s in LOOKUP_SUBSETS
        if (v := by_subset.get(s))
    }
    avg = sum(x["accuracy_pct"] for x in subsets.values()) / len(subsets) if subsets else None
    return {"metric": metric, "subsets": subsets, "average_pct": avg}


def article_comparison(table: Mapping[str, Any], model: str) -> dict[str, Any]:
    """This run's results table beside the article's per-model figures.

    Args:
        table: :func:`results_table`'s result.
        model: this run's model name.

    Returns:
        ``{"source", "subsets", "definition", "rows": [{"model", "per_subset": {subset:
        %}, "avg_article": % or None, "avg_without_gost": %, "source"}]}``: the article's
        eight models (``avg_article`` its printed "Avg" over seven subsets, gosts
        included) and this run (``avg_article`` None: no gost here); ``avg_without_gost``
        is the unweighted mean over wiki and syn1-syn5 for every row, over the subsets
        this run has.
    """
    ours = {s: v["accuracy_pct"] for s, v in table["subsets"].items()}
    rows = []
    for name, (_, printed) in article.RESULTS.items():
        values = article.per_subset(name)
        shared = {s: values[s] for s in ours} or {s: v for s, v in values.items() if s != "gosts"}
        rows.append({"model": name, "per_subset": values, "avg_article": printed,
                     "avg_without_gost": article.average(shared), "source": "article"})  # fmt: skip
    if ours:
        rows.append({"model": model, "per_subset": ours, "avg_article": None,
                     "avg_without_gost": article.average(ours), "source": "this run"})  # fmt: skip
    return {
        "source": article.SOURCE,
        "subsets": list(article.SUBSETS),
        "metric": table.get("metric", "exact_match"),
        "definition": "avg_article: the article's Avg, the unweighted mean of its 7 subsets "
        "(wiki, gosts, syn1-syn5); avg_without_gost: the unweighted mean over the subsets this "
        "run has (wiki, syn1-syn5 at their default caps), the article's values recomputed "
        "over the same subsets",
        "rows": rows,
    }


def heatmap_w_r(
    items: Iterable[Mapping[str, Any]], subset: str, metric: str = "exact_match"
) -> tuple[np.ndarray, np.ndarray]:
    """Accuracy and question counts over width W (rows, index W) x answer row r (columns, index r).

    Returns:
        (accuracy, n), each of shape (17, 65); index 0 unused; accuracy NaN where n = 0.
    """
    total = np.zeros((MAX_WIDTH + 1, MAX_ROW + 1))
    n = np.zeros_like(total)
    for it in _scored(items, metric):
        meta = it["meta"]
        if meta["subset"] == subset and meta["width"] <= MAX_WIDTH and meta["row"] <= MAX_ROW:
            total[meta["width"], meta["row"]] += it["scores"][metric]
            n[meta["width"], meta["row"]] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / n, np.nan), n


def heatmap_w_d(
    items: Iterable[Mapping[str, Any]], subset: str, metric: str = "exact_match"
) -> tuple[np.ndarray, np.ndarray]:
    """The article's folded W x (q - t) matrix: (i, j) = (d, W) for d > 0, (W, -d) for d < 0.

    Returns:
        (accuracy, n), each of shape (17, 17) indexed 1..16; the diagonal and index 0
        stay empty (NaN accuracy, n = 0).
    """
    total = np.zeros((MAX_WIDTH + 1, MAX_WIDTH + 1))
    n = np.zeros_like(total)
    for it in _scored(items, metric):
        meta = it["meta"]
        width, d = meta["width"], meta["distance"]
        if meta["subset"] != subset or width > MAX_WIDTH or d == 0:
            continue
        i, j = (d, width) if d > 0 else (width, -d)
        total[i, j] += it["scores"][metric]
        n[i, j] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / n, np.nan), n


def _extent(n: np.ndarray, square: bool) -> tuple[range, range]:
    """The rows and columns of a heatmap that hold questions: W from the smallest to the
    largest width asked about, r (or j) from 1 to the largest; for the folded W x (q - t)
    matrix one range 1..m for both axes (its two triangles share them). Index 0 is unused."""
    rows = np.flatnonzero(n.any(axis=1))
    cols = np.flatnonzero(n.any(axis=0))
    if not rows.size:
        return range(1, 2), range(1, 2)
    if square:
        m = int(max(rows.max(), cols.max()))
        return range(1, m + 1), range(1, m + 1)
    return range(int(rows.min()), int(rows.max()) + 1), range(1, int(cols.max()) + 1)


def _plot(
    acc: np.ndarray, n: np.ndarray, title: str, xlabel: str, ylabel: str, path: Path, annotate: bool
) -> None:
    """One heatmap over the rows and columns that hold questions (:func:`_extent`): a
    user's 6-row table of width 5 is a 1 x 6 map, the article's synthetic subsets 15 x 64."""
    plt = pyplot()
    rows, cols = _extent(n, square=annotate)
    size = (
        (max(4.5, len(cols) * 0.6 + 2.5), max(3.2, len(rows) * 0.55 + 2))
        if annotate
        else (max(6, len(cols) * 0.32 + 2.5), max(3.2, len(rows) * 0.32 + 2))
    )
    fig, ax = plt.subplots(figsize=size, dpi=100)
    part = acc[rows.start : rows.stop, cols.start : cols.stop]
    image = ax.imshow(np.ma.masked_invalid(part), cmap="RdYlGn", vmin=0, vmax=1, origin="upper",
                      aspect="auto")  # fmt: skip
    step = max(1, len(cols) // 32)  # at most about 32 labels on an axis
    ax.set_xticks(range(0, len(cols), step), [str(c) for c in cols[::step]], fontsize=7)
    ax.set_yticks(range(len(rows)), [str(r) for r in rows], fontsize=7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(fit_title(title, size[0] * 0.8, 9), fontsize=9)
    if annotate:
        for a, i in enumerate(rows):
            for b, j in enumerate(cols):
                if n[i, j]:
                    colour = cell_text_colour(image.cmap(image.norm(acc[i, j])))
                    ax.text(b, a, f"{100 * acc[i, j]:.0f}\n{int(n[i, j])}", ha="center",
                            va="center", fontsize=7, color=colour)  # fmt: skip
    fig.colorbar(image, ax=ax, label="accuracy (exact match)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def headline_metric(record: Mapping[str, Any], suite: str) -> str:
    """The metric the results table and heatmaps show: ``tableqa.match`` of the run
    (``strict`` -> ``exact_match``, the article's; ``normalized`` -> ``exact_match_normalized``)."""
    notes = record.get("suites", {}).get(suite, {}).get("notes", {})
    return MATCH_METRICS.get(notes.get("options", {}).get("match", "strict"), "exact_match")


def _nan_as_null(values: np.ndarray) -> list[Any]:
    """``values`` as nested lists with NaN (a cell without questions) as None (JSON null)."""
    out = values.astype(object)
    out[np.isnan(values)] = None
    return out.tolist()


def write_artifacts(record: Mapping[str, Any], suite: str, folder: Path, stem: str) -> list[Path]:
    """Two heatmap PNGs per subset with questions, and one JSON with every matrix and count.

    Files: ``<stem>-tableqa-<subset>-w_r.png``, ``<stem>-tableqa-<subset>-w_d.png``,
    ``<stem>-tableqa-heatmaps.json``.
    """
    items = record["items"]
    metric = headline_metric(record, suite)
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    matrices: dict[str, Any] = {}
    present = {it["meta"].get("subset") for it in items if it.get("suite") == suite}
    for subset in [*LOOKUP_SUBSETS, *sorted(present - set(LOOKUP_SUBSETS) - {None})]:
        acc_r, n_r = heatmap_w_r(items, subset, metric)
        if not n_r.any():
            continue
        acc_d, n_d = heatmap_w_d(items, subset, metric)
        model = record.get("model", {}).get("name", "")
        p1 = folder / f"{stem}-tableqa-{subset}-w_r.png"
        _plot(
            acc_r,
            n_r,
            f"{subset}: {metric} by table width W and answer row r\n{model} (counts per cell: "
            "the heatmaps JSON)",
            "answer row r",
            "table width W",
            p1,
            annotate=False,
        )
        p2 = folder / f"{stem}-tableqa-{subset}-w_d.png"
        _plot(
            acc_d,
            n_d,
            f"{subset}: {metric} by width W and q - t\n{model}\nabove the diagonal W = j, "
            "q - t = +i\nbelow it W = i, q - t = -j; a cell: accuracy %, n",
            "j",
            "i",
            p2,
            annotate=True,
        )
        written += [p1, p2]
        matrices[subset] = {
            "w_r": {
                "accuracy": _nan_as_null(acc_r),
                "n": n_r.astype(int).tolist(),
            },
            "w_d": {
                "accuracy": _nan_as_null(acc_d),
                "n": n_d.astype(int).tolist(),
            },
        }
    table = results_table(items, metric)
    if table["subsets"]:
        path = folder / f"{stem}-tableqa-article.json"
        comparison = article_comparison(table, record.get("model", {}).get("name", "this run"))
        path.write_text(json.dumps(comparison, indent=1), encoding="utf-8")
        written.append(path)
    if matrices:
        path = folder / f"{stem}-tableqa-heatmaps.json"
        path.write_text(
            json.dumps({"layout": __doc__, "metric": metric, "subsets": matrices}), encoding="utf-8"
        )
        written.append(path)
    return written


def summary_lines(record: Mapping[str, Any], suite: str) -> list[str]:
    """The article's results table (exact match, %) for the terminal, with the article's
    own figures over the same subsets beside it."""
    metric = headline_metric(record, suite)
    table = results_table(record["items"], metric)
    if not table["subsets"]:
        return []
    names = list(table["subsets"])
    header = "  ".join(f"{s:>6}" for s in [*names, "avg"])
    values = "  ".join(f"{table['subsets'][s]['accuracy_pct']:6.1f}" for s in names)
    counts = "  ".join(f"{table['subsets'][s]['n']:6d}" for s in names)
    comparison = article_comparison(table, "this run")
    lines = [
        f"tableqa results ({metric} %, as the article's table; gost not available; avg = "
        f"unweighted mean over the {len(names)} subsets shown, not the article's 7-subset Avg):",
        f"  subset {header}",
        f"  acc %  {values}  {table['average_pct']:6.1f}",
        f"  n      {counts}",
        "  the article over the same subsets (avg), "
        + ", ".join(f"{r['model']} {r['avg_without_gost']:.1f}" for r in comparison["rows"][:-1])
        + f" ({len(comparison['rows']) - 1} models; per subset in <run-id>-tableqa-article.json)",
    ]
    return lines
