"""HTML: the run's page (jinja2), written from the run record by every path that ends a run.

Top to bottom: the verdict and its reasons; the gates, each with the mean, 95% CI and n of
its metric and what decided it; the baseline comparison; the scores by suite, each with
its scale, the team's own suites first and the public suites whose every metric has too
few items for an interval folded under the table (no interval is shown below
``MIN_INTERVAL_N`` items: "n too small"); each team suite's metrics by its first
breakdown attribute (``kv``: per key), with intervals; every picture the run drew (its charts, one per scale, and the suites' own:
Table-QA heatmaps, MINEA's criteria plot), embedded; the items an early stop left out
(``--stop-when-decided``, by suite); the breakdowns as tables; the
suites' own tables; and the per-item view with its filters (failed items, items that
scored 0, suite, metric, text), which a gate's "items" link opens on that gate's metric.
One self-contained file: no request leaves the page (inline CSS and script).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from extractbench.plugins.outputs.early_stop_report import (
    STOPPED_LEGEND,
    STOPPED_MARK,
    any_stopped,
    interval_head,
    not_run_items,
    sequence_text,
    stopped_interval,
)
from extractbench.plugins.outputs.html_items import as_text, item_rows, score_text
from extractbench.plugins.outputs.metric_facts import (
    MIN_INTERVAL_N,
    MIN_PLOT_N,
    TOO_SMALL,
    MetricFacts,
    small_suites,
    suite_order,
)
from extractbench.plugins.record import Aggregate, GateEntry, RunRecord
from extractbench.plugins.verdict.counts import missing_label_lines

__all__ = ["page_html", "as_text", "figures"]

_ENV = Environment(
    loader=PackageLoader("extractbench.plugins.outputs", "templates"),
    autoescape=select_autoescape(["html", "j2"]),
)
_ENV.filters["text"] = as_text
_ENV.filters["score"] = score_text
_ENV.filters["stopped_ci"] = stopped_interval

_GATE_FIELDS = {"expression", "metric", "op", "threshold", "source", "value", "passed", "reason"}
_AGGREGATE_FIELDS = {"mean", "ci_low", "ci_high", "n", "ci_method", "breakdowns", "stopped_early"}


def _extra(model: Any, known: set[str]) -> dict[str, Any]:
    """Fields a record section holds beyond those the page lays out (shown as they are,
    so a field a later version adds is on the page without a change here)."""
    return {k: v for k, v in model.model_dump(mode="json").items() if k not in known and v}


def figures(images: Sequence[Path], stem: str) -> list[dict[str, str]]:
    """The PNGs to embed (base64): ``name`` (without the run's prefix), ``group`` (``run``
    for the charts of every suite, else the suite the file belongs to), ``data``."""
    out = []
    for path in images:
        if path.suffix != ".png" or not path.is_file():
            continue
        name = path.stem.removeprefix(f"{stem}-")
        group = "run" if name.startswith("metrics-") else name.split("-", 1)[0]
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        out.append({"name": name, "group": group, "data": data})
    return out


def _gate_rows(record: RunRecord, facts: MetricFacts) -> list[dict[str, Any]]:
    rows = []
    for gate in record.gates:
        agg: Aggregate | None = record.aggregates.get(gate.metric)
        word = {True: "PASS", False: "FAIL", None: "NOT DECIDED"}[gate.passed]
        suite, _, metric = gate.metric.partition("/")
        extra = _extra(gate, _GATE_FIELDS)
        if gate.sequence is not None:  # in words, not as the record's object
            extra["sequence"] = sequence_text(gate.sequence)
        rows.append(
            {"gate": gate, "word": word, "agg": agg, "suite": suite, "metric": metric,
             "extra": extra,
             "self_judged": gate.metric in facts.self_judged}
        )  # fmt: skip
    return rows


def _score_rows(record: RunRecord, facts: MetricFacts) -> list[dict[str, Any]]:
    """The score table's rows, the team's suites first (:func:`suite_order`); ``small``:
    the row of a public suite whose every metric has fewer than ``MIN_INTERVAL_N`` items
    (shown folded, under the table), unless a gate reads it."""
    by_metric: dict[str, list[GateEntry]] = {}
    for gate in record.gates:
        by_metric.setdefault(gate.metric, []).append(gate)
    by_suite: dict[str, list[str]] = {}
    for key in record.aggregates:
        by_suite.setdefault(key.split("/", 1)[0], []).append(key)
    rows = []
    folded = small_suites(record.aggregates, facts.own_suites)
    for suite in suite_order(by_suite, facts.own_suites):
        keys = by_suite[suite]
        small = suite in folded
        for key in keys:
            agg = record.aggregates[key]
            rows.append(
                {"key": key, "suite": suite, "metric": key.split("/", 1)[-1],
                 "agg": agg, "scale": facts.scale(key).label, "gates": by_metric.get(key, []),
                 "self_judged": key in facts.self_judged, "extra": _extra(agg, _AGGREGATE_FIELDS),
                 "small": small and key not in by_metric}
            )  # fmt: skip
    return rows


def _breakdown_rows(record: RunRecord, facts: MetricFacts) -> list[dict[str, Any]]:
    """Every breakdown level of every metric: suite, metric, attribute, level, aggregate;
    the team's suites first."""
    rows = []
    order = suite_order({k.split("/", 1)[0] for k in record.aggregates}, facts.own_suites)
    for key, agg in sorted(
        record.aggregates.items(), key=lambda kv: order.index(kv[0].split("/", 1)[0])
    ):
        for attr, levels in (agg.breakdowns or {}).items():
            for level, sub in levels.items():
                rows.append({"key": key, "attr": attr, "level": level, "agg": sub})
    return rows


def _own_breakdowns(record: RunRecord, facts: MetricFacts) -> list[dict[str, Any]]:
    """Each metric of the team's suites by the suite's first breakdown attribute (``kv``:
    accuracy per key), each level with its 95% interval: ``key``, ``attr``, ``rows``."""
    out = []
    for key, agg in record.aggregates.items():
        if key.split("/", 1)[0] not in facts.own_suites:
            continue
        attr, levels = next(iter((agg.breakdowns or {}).items()), ("", {}))
        if len(levels) > 1:
            rows = [{"level": level, "agg": sub} for level, sub in levels.items()]
            out.append({"key": key, "attr": attr, "rows": rows})
    return out


def _side_files(record: RunRecord, page: Path | None) -> list[dict[str, str]]:
    """The record's side files that are not pictures, as links relative to the page."""
    out = []
    for name in record.artifacts:
        path = Path(name)
        if path.suffix == ".png":
            continue
        href = os.path.relpath(path.resolve(), page.resolve().parent) if page else str(path)
        out.append({"name": path.name, "href": Path(href).as_posix()})
    return out


def page_html(
    record: RunRecord,
    images: Sequence[Path] = (),
    suite_lines: Sequence[str] = (),
    facts: MetricFacts | None = None,
    page: Path | None = None,
) -> str:
    """The whole self-contained page (see the module docstring).

    Args:
        record: a decided run record (its ``verdict`` set).
        images: the PNG files to embed (the run's plots and the suites' own).
        suite_lines: the suites' own report lines (Table-QA results table, MINEA tables).
        facts: each metric's scale and self-judged mark (none given: 0-1, none marked).
        page: where the page is written (links to the side files are made relative to it).
    """
    facts = facts or MetricFacts()
    rows = item_rows(record.items, facts)
    counts = {s: sum(r.status == s for r in rows) for s in ("failed", "zero", "passed")}
    shown = figures(images, record.run_id)
    own = _own_breakdowns(record, facts)
    return _ENV.get_template("page.html.j2").render(
        word=record.verdict.word if record.verdict else "NOT DECIDED",
        reasons=record.verdict.reasons if record.verdict else [],
        missing_labels=missing_label_lines(record.suites),
        record=record,
        model=record.model,
        gates=_gate_rows(record, facts),
        scores=_score_rows(record, facts),
        breakdowns=_breakdown_rows(record, facts),
        own_breakdowns=own,
        # the attribute a team suite's by-key table links its items by (text "key=VALUE;")
        own_attrs={b["key"].split("/", 1)[0]: b["attr"] for b in own},
        min_interval_n=MIN_INTERVAL_N,
        min_plot_n=MIN_PLOT_N,
        too_small=TOO_SMALL,
        ci_head=interval_head(record.aggregates),
        stopped_legend=STOPPED_LEGEND if any_stopped(record.aggregates) else "",
        stopped_mark=STOPPED_MARK,
        self_judged=sorted(facts.self_judged),
        figures=shown,
        figure_groups=sorted({f["group"] for f in shown}, key=lambda g: (g != "run", g)),
        side_files=_side_files(record, page),
        suite_lines=list(suite_lines),
        items=rows,
        item_counts=counts,
        suites=sorted({it.suite for it in record.items}),
        metrics=sorted({m for it in record.items for m, v in it.scores.items() if v is not None}),
        others=record.other_tests,
        not_run=_not_run(record),
    )


def _not_run(record: RunRecord) -> dict[str, dict[str, Any]]:
    """Suite -> the message and ids of its items an early stop left out."""
    out: dict[str, dict[str, Any]] = {}
    for gone in not_run_items(record):
        out.setdefault(gone.suite, {"message": gone.message, "ids": []})["ids"].append(gone.id)
    return out
