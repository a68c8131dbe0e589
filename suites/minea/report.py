"""MINEA report: the type x criterion table (Table 5) with the control's false-positive
rates, MINEA per type and overall (Table 3), the quality scores by number of iterations
(Table 2) and, when asked for, redundancy by piece position (Table 1, lost in the middle).
Computed from the run record's items, so ``extractbench report`` renders the same tables
later. A run whose ``llm`` criterion was decided by the model under test itself is flagged.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from extractbench.suites.figures import cell_text_colour, fit_title, pyplot
from extractbench.suites.minea.matching import CRITERIA
from extractbench.suites.minea.quality import QUALITY_METRICS
from extractbench.suites.minea.scoring import MAX_CONTROL_FP, criteria_table, minea_scores

__all__ = ["tables", "summary_lines", "write_artifacts"]

FALSE_POSITIVE_WARNING = 0.2


def _items(record: Mapping[str, Any], suite: str) -> list[Mapping[str, Any]]:
    return [
        it
        for it in record.get("items", [])
        if it.get("suite") == suite and it.get("outcome", "passed") == "passed"
    ]


def _mean_table(rows: Iterable[Mapping[str, Mapping[str, float | None]]]) -> dict[str, Any]:
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        for column, scores in row.items():
            for metric, value in scores.items():
                if value is not None:
                    values[column][metric].append(value)
    return {
        column: {m: (sum(v) / len(v), len(v)) for m, v in metrics.items()}
        for column, metrics in sorted(values.items(), key=lambda kv: int(kv[0]))
    }


def tables(record: Mapping[str, Any], suite: str = "minea") -> dict[str, Any]:
    """All MINEA tables of a run record.

    Returns:
        ``{"criteria": criteria_table(...), "minea": minea_scores(...) (needles pooled over
        the run: the paper's figure), "max_control_fp": float, "judge": {how: documents},
        "self_judged": documents, "by_iteration": {k: {metric: (mean over documents, n)}},
        "lost_in_the_middle": {piece: (mean, n)}, "documents": int}``.
    """
    items = _items(record, suite)
    needles = [n for it in items for n in it.get("details", {}).get("needles", [])]
    table = criteria_table(needles)
    options = record.get("suites", {}).get(suite, {}).get("notes", {}).get("options", {})
    threshold = float(options.get("max_control_fp", MAX_CONTROL_FP))
    judges: dict[str, int] = defaultdict(int)
    for it in items:
        judges[str(it.get("details", {}).get("judge", "unknown"))] += 1
    by_iteration = _mean_table(it.get("details", {}).get("by_iteration", {}) for it in items)
    lost: dict[str, list[float]] = defaultdict(list)
    for it in items:
        for piece, value in (
            it.get("details", {}).get("extraction", {}).get("lost_in_the_middle", {}).items()
        ):
            if value is not None:
                lost[piece].append(value)
    return {
        "criteria": table,
        "minea": minea_scores(table, threshold),
        "max_control_fp": threshold,
        "judge": dict(sorted(judges.items())),
        "self_judged": sum(bool(it.get("details", {}).get("self_judged")) for it in items),
        "by_iteration": by_iteration,
        "lost_in_the_middle": {
            p: (sum(v) / len(v), len(v)) for p, v in sorted(lost.items(), key=lambda kv: int(kv[0]))
        },
        "documents": len(items),
    }


def _fmt(value: float | None) -> str:
    return "     -" if value is None else f"{value:6.3f}"


def _criteria_lines(t: Mapping[str, Any], column: str, best: bool) -> list[str]:
    """One line per type: ``column`` (``share``, ``control``) per criterion, then MINEA."""
    lines = []
    for type_name, entry in t["criteria"].items():
        per_type = t["minea"]["per_type"].get(type_name, {})
        cells = []
        for c in CRITERIA:
            mark = "*" if c in per_type.get("excluded", ()) else " "
            cells.append(f" {_fmt(entry[c][column])}{mark}")
        tail = f"  {_fmt(per_type.get('minea'))}" if best else " " * 8
        lines.append(f"  {type_name:<17}{''.join(cells)}{tail} {entry['_count']:>8}")
    return lines


def summary_lines(record: Mapping[str, Any], suite: str) -> list[str]:
    """The self-judged warning, Table 5 with the MINEA column (Table 3), the control's
    false-positive rates and Table 2, as terminal lines."""
    t = tables(record, suite)
    if not t["criteria"]:
        return []
    minea = t["minea"]
    head = "".join(f" {c:>6} " for c in CRITERIA)  # each cell: " 0.123*"
    lines = []
    if t["self_judged"]:
        lines.append(
            f"minea: warning: SELF-JUDGED: the model under test decided the llm criterion on "
            f"{t['self_judged']} of {t['documents']} documents (minea.judge=self without "
            "--judge-model); it can lift its own score: gate on minea/score_no_llm"
        )
    has_control = any(e[c]["control"] is not None for e in t["criteria"].values() for c in CRITERIA)
    lines += [
        f"minea: hit rate per type and criterion (paper Table 5) and MINEA per type (Table 3), "
        f"{t['documents']} documents, {minea['needles']} needles, judge: "
        + ", ".join(f"{k} ({v})" for k, v in t["judge"].items())
        + ":",
        f"  {'type':<17}{head}{'MINEA':>8} {'needles':>8}",
        *_criteria_lines(t, "share", best=True),
        f"  {'overall MINEA':<17}{'':>{8 * len(CRITERIA)}}  {_fmt(minea['overall'])}"
        "  (needles pooled over documents, as the paper)",
        f"  {'without llm':<17}{'':>{8 * len(CRITERIA)}}  {_fmt(minea['overall_no_llm'])}"
        "  (criteria n, ns, k only)",
    ]
    if has_control:
        lines += [
            "minea: control false-positive rate (the criterion fires on the document without "
            f"needles); * = above minea.max_control_fp={t['max_control_fp']}, not used for the "
            "type; a needle the control also hits does not count as found:",
            f"  {'type':<17}{head}{'':>8} {'needles':>8}",
            *_criteria_lines(t, "control", best=False),
        ]
    fp = record.get("aggregates", {}).get(f"{suite}/llm_false_positive")
    if fp and fp["mean"] > FALSE_POSITIVE_WARNING:
        lines.append(
            f"  warning: the judge calls {100 * fp['mean']:.0f}% of decoy needles (never infused) "
            "extracted; the llm column and MINEA with it are unreliable for this judge"
        )
    if t["by_iteration"]:
        columns = list(t["by_iteration"])
        lines.append(
            "minea: extraction quality by number of iterations (paper Table 2, mean over documents):"
        )
        lines.append(f"  {'iterations':<30}" + "".join(f"{c:>8}" for c in columns))
        for metric in QUALITY_METRICS:
            cells = [t["by_iteration"][c].get(metric) for c in columns]
            text = "".join("       -" if v is None else f"{v[0]:8.4f}" for v in cells)
            lines.append(f"  {metric:<30}{text}")
    if t["lost_in_the_middle"]:
        lines.append("minea: redundancy (key = name) of re-extracting each piece (paper Table 1):")
        lines.append(
            "  " + "  ".join(f"{p}:{v:.3f}" for p, (v, _) in t["lost_in_the_middle"].items())
        )
    return lines


def write_artifacts(record: Mapping[str, Any], suite: str, folder: Path, stem: str) -> list[Path]:
    """``<stem>-minea-tables.json`` (every table) and ``<stem>-minea-criteria.png`` (the
    type x criterion table as a heatmap, MINEA column last; a criterion no item decided,
    such as ``llm`` without a judge, is named in the title instead of a blank column;
    each cell's text black or white by the cell's luminance)."""
    t = tables(record, suite)
    if not t["criteria"]:
        return []
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"{stem}-minea-tables.json"
    data.write_text(json.dumps(t, indent=1), encoding="utf-8")
    plt = pyplot()
    types = list(t["criteria"])
    # a criterion no item decided (``llm`` when no judge ran) is left out and named in
    # the title, not shown as a blank column
    judged = [c for c in CRITERIA if any(t["criteria"][x][c]["share"] is not None for x in types)]
    unjudged = [c for c in CRITERIA if c not in judged]
    columns = [*judged, "MINEA"]
    grid = np.full((len(types), len(columns)), np.nan)
    for i, type_name in enumerate(types):
        for j, criterion in enumerate(judged):
            share = t["criteria"][type_name][criterion]["share"]
            grid[i, j] = np.nan if share is None else share
        best = t["minea"]["per_type"].get(type_name)
        grid[i, -1] = np.nan if best is None else best["minea"]
    fig, ax = plt.subplots(figsize=(7.5, 0.45 * len(types) + 1.8), dpi=100)
    image = ax.imshow(np.ma.masked_invalid(grid), cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(columns)), columns)
    ax.set_yticks(range(len(types)), [f"{x} ({t['criteria'][x]['_count']})" for x in types])
    for i in range(len(types)):
        for j in range(len(columns)):
            if not np.isnan(grid[i, j]):
                colour = cell_text_colour(image.cmap(image.norm(grid[i, j])))
                ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", fontsize=8,
                        color=colour)  # fmt: skip
    overall, label_free = t["minea"]["overall"], t["minea"]["overall_no_llm"]
    ax.set_title(
        fit_title(
            f"MINEA: share of needles found per type and criterion\n"
            f"{record.get('model', {}).get('name', '')}{' (SELF-JUDGED)' if t['self_judged'] else ''}, "
            f"{t['minea']['needles']} needles: overall "
            f"MINEA {'-' if overall is None else f'{overall:.3f}'}, without llm "
            f"{'-' if label_free is None else f'{label_free:.3f}'}"
            + (f"\nnot decided in this run: {', '.join(unjudged)}" if unjudged else ""),
            7.0,
            10,
        ),
        fontsize=10,
    )
    fig.colorbar(image, ax=ax, label="share of needles found")
    fig.tight_layout()
    png = folder / f"{stem}-minea-criteria.png"
    fig.savefig(png)
    plt.close(fig)
    return [data, png]
