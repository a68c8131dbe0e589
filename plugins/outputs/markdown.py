"""A compact markdown summary of a run record, for a CI job summary page."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from plugins.verdict.decide import verdict

__all__ = ["summary_markdown"]


def _f(x: float | None, digits: int = 4) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def _link(path: Path, relative_to: Path | None) -> str:
    full = path.resolve()
    if relative_to and full.is_relative_to(relative_to):
        return str(full.relative_to(relative_to))
    return str(path)


def summary_markdown(
    record: Mapping[str, Any],
    artifacts: Sequence[Path] = (),
    relative_to: Path | None = None,
    suite_lines: Sequence[str] = (),
) -> str:
    """Markdown: verdict line, score table, gates, baseline deltas, suite tables (as the
    terminal prints them, in a code block), links to plots.

    Args:
        record: the run record.
        artifacts: plot and report files to link.
        relative_to: folder the markdown file lives in (links are made relative to it).
        suite_lines: the suites' own report lines (Table QA results, MINEA tables).
    """
    gates = record.get("gates", [])
    comparisons = record.get("baseline", {}).get("comparisons", [])
    model = record.get("model", {})
    counts = record.get("counts", {})
    decision = verdict(record)
    lines = [
        f"## extractbench {decision.word} (exit {decision.status})",
        "",
        *(f"- {reason}" for reason in decision.reasons),
        "" if decision.reasons else None,
        f"Model **{model.get('name', '?')}** ({model.get('backend', '?')}, sha256 `{str(model.get('sha256', ''))[:12]}`), "
        f"run `{record.get('run_id', '')}`: {counts.get('scored', 0)} items scored, {counts.get('failed', 0)} failed"
        + ("" if record.get("complete", True) else ", **incomplete run**")
        + ".",
        "",
        "| suite | metric | mean | 95% CI | n | gate |",
        "|---|---|---:|---|---:|---|",
    ]
    lines = [line for line in lines if line is not None]
    by_metric: dict[str, list[str]] = {}
    for g in gates:
        word = {True: "PASS", False: "FAIL", None: "not evaluated"}[g["passed"]]
        by_metric.setdefault(g["metric"], []).append(f"{word} {g['op']} {g['threshold']:g}")
    for key, agg in record.get("aggregates", {}).items():
        suite, metric = key.split("/", 1)
        ci = f"[{_f(agg['ci_low'])}, {_f(agg['ci_high'])}]"
        lines.append(
            f"| {suite} | {metric} | {_f(agg['mean'])} | {ci} | {agg['n']} | {', '.join(by_metric.get(key, []))} |"
        )
    unevaluated = [g for g in gates if g["passed"] is None]
    if unevaluated:
        lines += ["", "**Not evaluated:**", ""]
        lines += [f"- gate `{g['expression']}`: {g['reason']}" for g in unevaluated]
    if comparisons:
        base = record["baseline"]
        lines += [
            "",
            f"### Against baseline `{base.get('run_id', '')}` ({base.get('model', '')})",
            "",
            "| metric | baseline | current | Δ (paired) | 95% CI | shared | only here / only baseline | verdict |",
            "|---|---:|---:|---:|---|---:|---|---|",
        ]
        for c in comparisons:
            lines.append(
                f"| {c['metric']} | {_f(c['baseline'])} | {_f(c['current'])} | {_f(c['delta'])} | "
                f"[{_f(c['ci_low'])}, {_f(c['ci_high'])}] | {c['n_shared']} | {c['only_current']} / {c['only_baseline']} | "
                f"{'FAIL: ' if c['failed'] else ''}{c['verdict']} |"
            )
    if suite_lines:
        lines += ["", "```", *suite_lines, "```"]
    if artifacts:
        lines += [
            "",
            "Plots: " + " · ".join(f"[{p.name}]({_link(p, relative_to)})" for p in artifacts),
        ]
    return "\n".join(lines) + "\n"
