"""A compact markdown summary of a run record, for a CI job summary page."""

from __future__ import annotations

from collections.abc import Sequence
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
from extractbench.plugins.outputs.speed_report import gate_condition, gate_warnings, speed_markdown
from extractbench.plugins.record import RunRecord
from extractbench.plugins.verdict.counts import missing_label_lines

__all__ = ["summary_markdown"]


def _f(x: float | None, digits: int = 4) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _link(path: Path, relative_to: Path | None) -> str:
    full = path.resolve()
    if relative_to and full.is_relative_to(relative_to):
        return str(full.relative_to(relative_to))
    return str(path)


def summary_markdown(
    record: RunRecord,
    artifacts: Sequence[Path] = (),
    relative_to: Path | None = None,
    suite_lines: Sequence[str] = (),
) -> str:
    """Markdown: verdict line, score table, gates, baseline deltas, suite tables (as the
    terminal prints them, in a code block), links to plots.

    Args:
        record: a decided run record (its ``verdict`` set).
        artifacts: plot and report files to link.
        relative_to: folder the markdown file lives in (links are made relative to it).
        suite_lines: the suites' own report lines (Table QA results, MINEA tables).
    """
    gates = record.gates
    comparisons = record.baseline.comparisons if record.baseline else []
    model, counts = record.model, record.counts
    word = record.verdict.word if record.verdict else "not decided"
    reasons = record.verdict.reasons if record.verdict else []
    lines: list[str] = [f"## extractbench {word} (exit {record.exit_status})", ""]
    if reasons:
        lines += [*(f"- {reason}" for reason in reasons), ""]
    missing = missing_label_lines(record.suites)
    if missing:
        lines += [*(f"- **missing labels** {line}" for line in missing), ""]
    lines += [
        f"Model **{model.get('name', '?')}** ({model.get('backend', '?')}, sha256 `{str(model.get('sha256', ''))[:12]}`), "
        f"run `{record.run_id}`: {counts.scored} items scored, {counts.failed} failed"
        + (f", {counts.not_run} {NOT_RUN}" if counts.not_run else "")
        + ("" if record.complete else ", **incomplete run**")
        + ".",
        "",
        f"| suite | metric | mean | {interval_head(record.aggregates)} | n | gate |",
        "|---|---|---:|---|---:|---|",
    ]
    by_metric: dict[str, list[str]] = {}
    for g in gates:
        state = {True: "PASS", False: "FAIL", None: "not evaluated"}[g.passed]
        by_metric.setdefault(g.metric, []).append(f"{state} {gate_condition(g)}")
    for key, agg in record.aggregates.items():
        suite, metric = key.split("/", 1)
        ci = (
            stopped_interval(agg) if agg.stopped_early else f"[{_f(agg.ci_low)}, {_f(agg.ci_high)}]"
        )
        mean = _f(agg.mean) + (STOPPED_MARK if agg.stopped_early else "")
        lines.append(
            f"| {suite} | {metric} | {mean} | {ci} | {agg.n} | {', '.join(by_metric.get(key, []))} |"
        )
    for key in dict.fromkeys(g.metric for g in gates if g.metric not in record.aggregates):
        first = next(g for g in gates if g.metric == key)  # a speed figure, a minimum n
        suite, _, metric = key.partition("/")
        value = "–" if first.stat == "n" else _f(first.value)
        lines.append(
            f"| {suite} | {metric} | {value} | – | {first.n or 0} | {', '.join(by_metric[key])} |"
        )
    if any_stopped(record.aggregates):
        lines += ["", STOPPED_LEGEND]
    lines += speed_markdown(record)
    warned = gate_warnings(record)
    if warned:
        lines += ["", *(f"- {line}" for line in warned)]
    decided = decided_lines(record)
    if decided:
        lines += ["", *(f"- {line}" for line in decided)]
    unevaluated = [g for g in gates if g.passed is None]
    if unevaluated:
        lines += ["", "**Not evaluated:**", ""]
        lines += [f"- gate `{g.expression}`: {g.reason}" for g in unevaluated]
    if comparisons and record.baseline is not None:
        base = record.baseline
        lines += [
            "",
            f"### Against baseline `{base.run_id}` ({base.model})",
            "",
            f"| metric | baseline | current | Δ (paired) | {interval_head(record.aggregates)} | shared | only here / only baseline | verdict |",
            "|---|---:|---:|---:|---|---:|---|---|",
        ]
        for c in comparisons:
            lines.append(
                f"| {c.metric} | {_f(c.baseline)} | {_f(c.current)} | {_f(c.delta)} | "
                f"[{_f(c.ci_low)}, {_f(c.ci_high)}] | {c.n_shared} | {c.only_current} / {c.only_baseline} | "
                f"{'FAIL: ' if c.failed else ''}{c.verdict} |"
            )
    if suite_lines:
        lines += ["", "```", *suite_lines, "```"]
    if artifacts:
        lines += [
            "",
            "Plots: " + " · ".join(f"[{p.name}]({_link(p, relative_to)})" for p in artifacts),
        ]
    return "\n".join(lines) + "\n"
