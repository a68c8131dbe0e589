"""What the terminal shows of a run record: the score table and the summary lines.

The live run, ``--rescore``, ``extractbench merge`` and ``extractbench report`` print the
same :func:`summary_lines`, ending in the record's verdict line.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from extractbench.plugins.outputs.early_stop_report import (
    NOT_RUN,
    STOPPED_LEGEND,
    STOPPED_MARK,
    any_stopped,
    decided_lines,
    interval_head,
    stopped_interval,
)
from extractbench.plugins.outputs.endpoint_stats import endpoint_lines
from extractbench.plugins.outputs.metric_facts import (
    TOO_SMALL,
    interval_shown,
    small_suites,
    suite_order,
)
from extractbench.plugins.outputs.speed_report import gate_condition, gate_warnings, speed_lines
from extractbench.plugins.record import Aggregate, GateEntry, RunRecord
from extractbench.plugins.verdict.counts import missing_label_lines

__all__ = [
    "score_table",
    "summary_lines",
    "verdict_line",
    "self_judged_line",
    "terminal_suite_lines",
    "SELF_JUDGED",
]

SELF_JUDGED = "[SELF-JUDGED]"


def self_judged_line(keys: Collection[str]) -> str:
    """The warning under a table whose metrics include self-judged ones ("" for none)."""
    if not keys:
        return ""
    return (
        f"{SELF_JUDGED} the model under test judged {', '.join(sorted(keys))} itself (no "
        "--judge-model): it can lift its own score; gate on a metric it does not judge"
    )


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.4f}"


def _ci(agg: Aggregate) -> str:
    if agg.stopped_early:
        return stopped_interval(agg)
    if not interval_shown(agg.n):
        return TOO_SMALL
    return f"[{_fmt(agg.ci_low)}, {_fmt(agg.ci_high)}]"


def _mean(agg: Aggregate) -> str:
    return _fmt(agg.mean) + (STOPPED_MARK if agg.stopped_early else "")


def score_table(
    aggregates: Mapping[str, Aggregate],
    gates: Sequence[GateEntry],
    self_judged: Collection[str] = (),
    own: Collection[str] = (),
) -> list[str]:
    """Lines of a fixed-width table: suite, metric, mean, 95% CI, n, gate verdict.

    The suites of ``own`` (the team's, :func:`metric_facts.suite_order`) come first. A
    metric of ``self_judged`` (``suite/metric`` keys: the model under test judged it) is
    marked ``[SELF-JUDGED]`` beside its name. A metric of fewer than
    :data:`metric_facts.MIN_INTERVAL_N` items shows ``n too small`` for its interval. A
    stopped estimate (its suite stopped early) has its mean marked
    :data:`early_stop_report.STOPPED_MARK` and the anytime-valid bounds for its interval
    (a breakdown row none); the column is then headed ``interval`` and a legend line
    follows the table.

    A suite that is not the team's and whose every metric has fewer items than that is one
    row (``7 metrics: in the HTML page and the record``), its gated metrics excepted, so a
    small run's summary fits one screen. A metric of a team's suite or a gated metric is
    followed by indented rows for the levels of the suite's first breakdown attribute
    (``kv``: one row per key), when it has more than one level. Gates whose metric is
    absent from ``aggregates`` get a row of their own.
    """
    by_metric: dict[str, list[GateEntry]] = {}
    for gate in gates:
        by_metric.setdefault(gate.metric, []).append(gate)

    def verdict(metric: str) -> str:
        words = {True: "PASS", False: "FAIL", None: "NOT EVALUATED"}
        return ", ".join(
            f"{words[g.passed]} {gate_condition(g)}" for g in by_metric.get(metric, [])
        )

    by_suite: dict[str, list[str]] = {}
    for key in aggregates:
        by_suite.setdefault(key.split("/", 1)[0], []).append(key)
    rows: list[tuple[str, ...]] = [
        ("suite", "metric", "mean", interval_head(aggregates), "n", "gate")
    ]
    small = small_suites(aggregates, own)
    for suite in suite_order(by_suite, own):
        keys = by_suite[suite]
        folded = [k for k in keys if suite in small and k not in by_metric]
        for key in keys:
            if key in folded:
                continue
            agg = aggregates[key]
            metric = key.split("/", 1)[1]
            name = f"{metric} {SELF_JUDGED}" if key in self_judged else metric
            rows.append((suite, name, _mean(agg), _ci(agg), str(agg.n), verdict(key)))
            if suite not in own and key not in by_metric:
                continue
            by, levels = next(iter((agg.breakdowns or {}).items()), ("", {}))  # the first one
            if len(levels) > 1:
                for level, sub in levels.items():
                    rows.append(("", f"  {by}={level}", _mean(sub), _ci(sub), str(sub.n), ""))
        if folded:
            n = max(aggregates[k].n for k in folded)
            what = f"{len(folded)} metric{'s' * (len(folded) > 1)}: in the HTML page and record"
            rows.append((suite, what, "-", TOO_SMALL, f"<={n}", ""))
    for metric in by_metric:
        if metric not in aggregates:
            suite, name = metric.split("/", 1) if "/" in metric else (metric, "")
            value = next((g.value for g in by_metric[metric] if g.value is not None), None)
            n = next((g.n for g in by_metric[metric] if g.n is not None), 0)
            rows.append(
                (suite, name, "-" if value is None else _fmt(value), "-", str(n), verdict(metric))
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for i, row in enumerate(rows):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    if any_stopped(aggregates):
        lines.append(STOPPED_LEGEND)
    return lines


def terminal_suite_lines(
    by_suite: Mapping[str, Sequence[str]], record: RunRecord, own: Collection[str]
) -> list[str]:
    """The suites' own report lines the terminal shows: each suite's as it wrote them, but
    one line for a suite the score table folds (:func:`metric_facts.small_suites`: its
    tables stay in the HTML page, the markdown summary and the record; its warning lines
    stay), so the summary of a small run fits one screen."""
    small = small_suites(record.aggregates, own)
    lines: list[str] = []
    for suite, said in by_suite.items():
        if suite in small and len(said) > 1:
            # a warning (SELF-JUDGED, an unreliable judge) is never folded away
            lines += [line for line in said if "warning" in line]
            lines.append(f"{suite}: its own tables ({len(said)} lines): in the HTML page")
        else:
            lines += said
    return lines


def verdict_line(record: RunRecord) -> str:
    """``extractbench verdict: PASS`` or ``... FAIL (exit 1): reason; reason``."""
    v = record.verdict
    if v is None:
        return "extractbench verdict: not decided"
    if v.word == "PASS":
        return "extractbench verdict: PASS"
    return f"extractbench verdict: {v.word} (exit {record.exit_status}): " + "; ".join(
        v.reasons[:3]
    )


def _baseline_lines(record: RunRecord) -> list[str]:
    base = record.baseline
    if base is None:
        return []
    lines = [f"baseline {base.run_id}: {base.reason}"]
    for c in base.comparisons:
        if c.delta is not None:
            lines.append(
                f"baseline {c.metric}: {c.baseline:.4f} -> {c.current:.4f}, paired delta {c.delta:+.4f} "
                f"[{c.ci_low:+.4f}, {c.ci_high:+.4f}] over {c.n_shared} shared items: {c.verdict}"
                + ("  REGRESSION GATE FAILED" if c.failed else "")
            )
        else:
            lines.append(
                f"baseline {c.metric}: not comparable (no shared items; {c.only_current} here, "
                f"{c.only_baseline} in baseline)"
            )
    return lines


def summary_lines(
    record: RunRecord,
    suite_lines: Sequence[str] = (),
    written: Path | None = None,
    self_judged: Collection[str] = (),
    own: Collection[str] = (),
) -> list[str]:
    """The summary every path prints: model, counts, caps, the score table, the suites'
    own lines, baseline deltas, undecided and failed gates, errors, files, the verdict.

    Args:
        record: a decided run record (its ``verdict`` set).
        suite_lines: the suites' own report lines (``Suite.summary_lines``).
        written: where the record was written (None: not written, or not by this command).
        self_judged: the ``suite/metric`` keys the model under test judged itself
            (``plugins.outputs.metric_facts``), marked in the score table.
        own: the team's own suites (``MetricFacts.own_suites``), shown first and whole.
    """
    model, counts = record.model, record.counts
    selection = record.selection
    lines = [
        f"model: {model.get('name', '?')} ({model.get('backend')}) sha256 {str(model.get('sha256', ''))[:12]}",
        f"items: {counts.scored} scored, {counts.failed} failed, of {counts.expected} selected"
        + (f", {counts.not_run} {NOT_RUN}" if counts.not_run else "")
        + ("" if record.complete else "  [INCOMPLETE RUN]"),
    ]
    repack = model.get("weight_repack") or {}
    if repack and not repack.get("repack", True):
        lines.insert(1, f"llama.cpp weight repacking {repack.get('reason')}")
    if selection.shard:
        lines.append(
            f"shard {selection.shard}: {counts.items} items of the selected groups fall here; "
            "`extractbench merge` of every shard's record decides the gates"
        )
    source = "run record (--rescore)" if record.rescore_of else "generation cache"
    lines.append(f"model calls: {counts.calls}, {counts.cached_calls} answered from the {source}")
    for name, info in sorted(record.suites.items()):
        if info.limit:
            lines.append(
                f"{name}: {info.items_selected} of {info.items_total} items ({info.limit.source} {info.limit.value})"
            )
        lines += [
            f"{name}: {note}"
            for key, note in sorted(info.notes.items())
            if key.startswith("warning")
        ]
    skipped = selection.skipped or record.suites_skipped
    lines += [f"{name}: SKIPPED ({why})" for name, why in sorted(skipped.items())]
    lines += [f"warning: {w}" for w in record.warnings]
    lines += endpoint_lines(record.endpoints or {})
    lines += score_table(record.aggregates, record.gates, self_judged, own)
    lines += [line for line in [self_judged_line(self_judged)] if line]
    lines += speed_lines(record)
    lines += list(suite_lines)
    lines += _baseline_lines(record)
    lines += gate_warnings(record)
    lines += decided_lines(record)
    for gate in record.gates:
        if gate.passed is False:
            lines.append(f"GATE FAILED  {gate.expression}: {gate.reason}")
        elif gate.passed is None:
            lines.append(f"GATE NOT EVALUATED  {gate.expression}: {gate.reason}")
    lines += [f"MISSING LABELS  {line}" for line in missing_label_lines(record.suites)]
    lines += [f"usage error: {line}" for line in record.usage_errors]
    if written is not None:
        lines.append(f"run record: {written}")
    lines += [f"NOT WRITTEN: {e}" for e in record.output_errors]
    lines.append(verdict_line(record))
    return lines
