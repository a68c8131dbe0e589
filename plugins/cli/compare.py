"""``extractbench compare OLD.json NEW.json``: what changed between two run records.

Per item (matched by id, scored in both): whether the answer changed and every score's
delta; per metric the paired comparison of the baseline gate
(:func:`plugins.verdict.baseline.compare_records`: the mean of the per-item differences
over shared items and its paired-bootstrap 95% CI; computed there, never here). Prints a
terminal table and, with ``--html``, writes a self-contained page (:func:`compare_html`:
jinja2, ``templates/compare.html.j2``). It decides nothing: the exit status
is 0, or 4 when a record cannot be read or the two scored a suite at different suite
versions or protocol options (:func:`plugins.verdict.baseline.incomparable_records`); a
release decision against a baseline is
``extractbench report NEW.json --baseline OLD.json --max-regression D``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape

from extractbench.plugins.outputs.html_report import as_text
from extractbench.plugins.outputs.paths import path_problems
from extractbench.plugins.record import Comparison, ItemEntry, RecordError, RunRecord, load_record
from extractbench.plugins.verdict.baseline import (
    compare_records,
    incomparable_line,
    incomparable_records,
)
from extractbench.plugins.verdict.exit_codes import OUTPUT_ERROR, USAGE_ERROR
from extractbench.plugins.verdict.speed import change_text, speed_changes, speed_stats
from extractbench.suites.files import write_output

__all__ = [
    "ItemChange", "RecordComparison", "compare_runs", "compare_lines", "compare_html",
    "compare_command",
]  # fmt: skip


@dataclass(frozen=True)
class ItemChange:
    """One item scored in both runs: its answers and ``metric -> (old, new)`` scores
    (metrics scored in both, without the suite prefix)."""

    id: str
    suite: str
    old_answer: Any
    new_answer: Any
    scores: dict[str, tuple[float, float]]

    @property
    def answer_changed(self) -> bool:
        return self.old_answer != self.new_answer

    def delta(self, metric: str) -> float:
        old, new = self.scores[metric]
        return new - old


@dataclass
class RecordComparison:
    """Two records side by side (see :func:`compare_runs`)."""

    old: RunRecord
    new: RunRecord
    items: list[ItemChange] = field(default_factory=list)
    only_old: list[str] = field(default_factory=list)
    only_new: list[str] = field(default_factory=list)
    metrics: list[Comparison] = field(default_factory=list)

    def suites(self) -> dict[str, dict[str, int]]:
        """suite -> shared items, answers changed, items whose scores rose / fell."""
        out: dict[str, dict[str, int]] = {}
        for change in self.items:
            row = out.setdefault(
                change.suite, {"shared": 0, "answers changed": 0, "up": 0, "down": 0}
            )
            row["shared"] += 1
            row["answers changed"] += change.answer_changed
            deltas = [change.delta(m) for m in change.scores]
            row["up"] += any(d > 0 for d in deltas)
            row["down"] += any(d < 0 for d in deltas)
        return out

    def largest(self, top: int | None) -> list[tuple[ItemChange, str, float]]:
        """The (item, metric, delta) score changes, largest first (``top`` of them)."""
        moves = [(c, m, c.delta(m)) for c in self.items for m in c.scores if c.delta(m) != 0]
        moves.sort(key=lambda x: (-abs(x[2]), x[0].id, x[1]))
        return moves if top is None else moves[:top]


def _scored(record: RunRecord) -> dict[str, ItemEntry]:
    return {it.id: it for it in record.items if it.outcome == "passed"}


def compare_runs(old: RunRecord, new: RunRecord) -> RecordComparison:
    """Compare ``new`` with ``old`` (the baseline): items scored in both, item by item,
    and every metric with the baseline gate's paired test (no ``--max-regression``)."""
    before, after = _scored(old), _scored(new)
    result = RecordComparison(old, new)
    result.only_old = sorted(set(before) - set(after))
    result.only_new = sorted(set(after) - set(before))
    for item_id in sorted(set(before) & set(after)):
        a, b = before[item_id], after[item_id]
        scores = {
            m: (float(x), float(y))
            for m in sorted(set(a.scores) & set(b.scores))
            if (x := a.scores[m]) is not None and (y := b.scores[m]) is not None
        }
        result.items.append(ItemChange(item_id, b.suite, a.prediction, b.prediction, scores))
    result.metrics = compare_records(new.as_dict(), old.as_dict(), None)
    return result


def _f(value: float | None, sign: bool = False) -> str:
    return "–" if value is None else (f"{value:+.4f}" if sign else f"{value:.4f}")


def _short(value: Any, width: int = 40) -> str:
    text = " ".join(str(value).split()) if value is not None else "–"
    return text if len(text) <= width else text[: width - 1] + "…"


def _run(record: RunRecord) -> str:
    verdict = record.verdict.word if record.verdict else "?"
    return (
        f"{record.run_id} ({record.model.get('name', '?')}, {len(record.items)} items, {verdict})"
    )


def _gate_stats_lines(result: RecordComparison) -> list[str]:
    """Each run's own mean, 95% CI and n per metric (what a gate checks), from the
    records' aggregates."""
    old, new = result.old.aggregates, result.new.aggregates
    keys = sorted(set(old) | set(new))
    if not keys:
        return []

    def one(key: str, aggs: dict) -> str:
        a = aggs.get(key)
        return "–" if a is None else f"{a.mean:.4f} [{a.ci_low:.4f}, {a.ci_high:.4f}] n={a.n}"

    width = max(len(k) for k in keys)
    lines = ["", "per metric in each run (what a gate checks: mean [95% CI] n):"]
    return lines + [f"{k:<{width}}  old {one(k, old)}  new {one(k, new)}" for k in keys]


def _speed_lines(result: RecordComparison) -> list[str]:
    """Each speed figure of the new run against the old one's (a ratio: no interval), but
    of no suite that stopped early in either run: its speed is its first groups'."""
    stopped = sorted(
        {
            name
            for record in (result.old, result.new)
            for name, info in record.suites.items()
            if info.stopped_early
        }
    )
    changes = speed_changes(
        speed_stats(it.model_dump() for it in result.new.items if it.suite not in stopped),
        speed_stats(it.model_dump() for it in result.old.items if it.suite not in stopped), None,
    )  # fmt: skip
    lines = [f"  {c.metric}: {change_text(c)}" for c in changes if c.slowdown is not None]
    lines += [
        f"  {name}: not compared, it stopped early (--stop-when-decided)"
        for name in stopped
    ]  # fmt: skip
    return (
        ["", "speed, new against old (model calls answered in each run):", *lines] if lines else []
    )


def compare_lines(result: RecordComparison, top: int = 20) -> list[str]:
    """The terminal report of a comparison."""
    width = max([len("metric"), *(len(c.metric) for c in result.metrics)])
    lines = [
        f"old: {_run(result.old)}",
        f"new: {_run(result.new)}",
        f"items scored in both: {len(result.items)}; only in old: {len(result.only_old)}; "
        f"only in new: {len(result.only_new)}",
        "",
        f"{'suite':<12} {'shared':>7} {'answers changed':>16} {'scores up':>10} {'scores down':>12}",
    ]
    for suite, row in sorted(result.suites().items()):
        lines.append(
            f"{suite:<12} {row['shared']:>7} {row['answers changed']:>16} {row['up']:>10} "
            f"{row['down']:>12}"
        )
    lines += [
        "",
        "per metric, paired over shared items (the baseline gate's test: mean difference, "
        "paired bootstrap 95% CI):",
        f"{'metric':<{width}} {'old':>8} {'new':>8} {'delta':>8}  {'95% CI':<20} {'n':>5}  verdict",
    ]
    for c in result.metrics:
        ci = f"[{_f(c.ci_low, True)}, {_f(c.ci_high, True)}]" if c.delta is not None else ""
        lines.append(
            f"{c.metric:<{width}} {_f(c.baseline):>8} {_f(c.current):>8} {_f(c.delta, True):>8}  "
            f"{ci:<20} {c.n_shared:>5}  {c.verdict}"
        )
    lines += _gate_stats_lines(result) + _speed_lines(result)
    moves = result.largest(top)
    if moves:
        lines += ["", f"largest per-item score changes ({len(moves)} shown):"]
        for change, metric, delta in moves:
            old, new = change.scores[metric]
            lines.append(
                f"  {change.id} {metric}: {old:.4f} -> {new:.4f} ({delta:+.4f}); answer "
                f"{_short(change.old_answer)!r} -> {_short(change.new_answer)!r}"
            )
    return lines


def add_compare_parser(sub: argparse._SubParsersAction) -> None:
    """The ``compare`` sub-command's arguments."""
    cmp = sub.add_parser(
        "compare",
        help="per-item changes between two run records (answers, score deltas, the "
        "baseline gate's paired test); decides nothing",
        description="Compare NEW.json with OLD.json: items scored in both, answers that "
        "changed, score deltas, and per metric the paired bootstrap test the baseline gate "
        "uses. Exit 0 (4 when a record cannot be read, or the records scored a suite at "
        "different suite versions or protocol options); for a release decision use "
        "`extractbench report NEW.json --baseline OLD.json --max-regression D`.",
    )
    cmp.add_argument("old", metavar="OLD.json", help="the earlier run record (the baseline)")
    cmp.add_argument("new", metavar="NEW.json", help="the later run record")
    cmp.add_argument("--html", metavar="PATH", help="also write a self-contained HTML page")
    cmp.add_argument("--top", type=int, default=20, metavar="N",
                     help="per-item changes listed in the terminal (default 20; the page has all)")  # fmt: skip
    cmp.add_argument("--allow-incomparable-baseline", action="store_true",
                     help="compare records that scored a suite at different suite versions or "
                     "protocol options (refused by default: exit 4)")  # fmt: skip


_ENV = Environment(
    loader=PackageLoader("extractbench.plugins.outputs", "templates"),
    autoescape=select_autoescape(["html", "j2"]),
)
_ENV.filters["text"] = as_text


def compare_html(result: RecordComparison) -> str:
    """A self-contained page: both runs, per suite and per metric tables, and every item
    whose answer or scores changed (old and new answers side by side)."""
    changed = [
        c for c in result.items if c.answer_changed or any(a != b for a, b in c.scores.values())
    ]
    return _ENV.get_template("compare.html.j2").render(
        old=result.old, new=result.new, items=result.items, only_old=result.only_old,
        only_new=result.only_new, suites=sorted(result.suites().items()),
        metrics=result.metrics, changed=changed,
    )  # fmt: skip


def compare_command(args: argparse.Namespace) -> int:
    """Run ``extractbench compare``; the exit status."""
    try:
        old, new = load_record(Path(args.old)), load_record(Path(args.new))
    except RecordError as exc:
        print(f"extractbench compare: {exc}", file=sys.stderr)
        return USAGE_ERROR
    problems = path_problems(
        [("OLD.json", args.old), ("NEW.json", args.new)], [("--html", args.html)]
    )
    for line in problems:
        print(f"extractbench compare: {line}", file=sys.stderr)
    if problems:
        return USAGE_ERROR
    changes = (
        [] if args.allow_incomparable_baseline else incomparable_records(new, old, "the new record")
    )
    if changes:
        print(f"extractbench compare: {incomparable_line(args.old, changes)}", file=sys.stderr)
        return USAGE_ERROR
    result = compare_runs(old, new)
    for line in compare_lines(result, max(args.top, 0)):
        print(line)
    if args.html:
        try:
            write_output(Path(args.html), compare_html(result))
        except OSError as exc:
            print(f"extractbench compare: --html {args.html}: {exc}", file=sys.stderr)
            return OUTPUT_ERROR
        print(f"compare page: {args.html}")
    return 0
