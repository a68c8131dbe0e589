"""The run's speed and the gates' warnings as the terminal, the markdown summary and JUnit
show them (the figures are the record's ``speed``: ``plugins.verdict.speed``)."""

from __future__ import annotations

from extractbench.plugins.record import GateEntry, RunRecord, SpeedStats
from extractbench.plugins.verdict.speed import change_text

__all__ = [
    "COLUMNS",
    "speed_rows",
    "speed_lines",
    "speed_markdown",
    "gate_warnings",
    "gate_condition",
]

COLUMNS = (
    "suite", "items/s", "prompt tok", "gen tok", "prefill tok/s", "decode tok/s",
    "p50 s", "p95 s", "max s", "cached",
)  # fmt: skip


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def speed_rows(record: RunRecord) -> list[tuple[str, ...]]:
    """One row of :data:`COLUMNS` per suite of the record's ``speed``."""
    rows = []
    for suite, s in record.speed.items():
        rows.append((
            suite, _num(s.items_per_s, 3), str(s.prompt_tokens), str(s.generated_tokens),
            _num(s.prefill_tokens_per_s, 1), _num(s.decode_tokens_per_s, 1),
            _num(s.latency_p50_s, 3), _num(s.latency_p95_s, 3), _num(s.latency_max_s, 3),
            _cached(s),
        ))  # fmt: skip
    return rows


def _cached(s: SpeedStats) -> str:
    share = "-" if s.cached_share is None else f"{s.cached_share:.0%}"
    return f"{share} ({s.cached_calls}/{s.calls})"


def _change_lines(record: RunRecord) -> list[str]:
    base = record.baseline
    if base is None:
        return []
    lines = []
    for c in base.speed:
        if c.slowdown is None:
            continue
        limit = "" if base.max_slowdown is None else f" (--max-slowdown {base.max_slowdown:g})"
        lines.append(
            f"speed {c.metric}: {change_text(c)} than the baseline{limit}"
            + ("  SPEED CHECK FAILED" if c.failed else "")
        )
    return lines


def speed_lines(record: RunRecord) -> list[str]:
    """A fixed-width table of each suite's speed (calls answered from the cache left out
    of the rates), then each speed figure's change against the baseline."""
    rows = speed_rows(record)
    if not rows:
        return []
    table = [COLUMNS, *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    lines = ["speed (model calls answered in this run; latency per call):"]
    for i, row in enumerate(table):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines + _change_lines(record)


def speed_markdown(record: RunRecord) -> list[str]:
    """The same as markdown lines: a table, then the baseline changes as a list."""
    rows = speed_rows(record)
    if not rows:
        return []
    lines = ["", "**Speed** (model calls answered in this run; latency per call):", ""]
    lines += ["| " + " | ".join(COLUMNS) + " |", "|---|" + "---:|" * (len(COLUMNS) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    changes = _change_lines(record)
    return lines + (["", *(f"- {line}" for line in changes)] if changes else [])


def gate_condition(gate: GateEntry) -> str:
    """``>=0.2``, ``ci_low>=0.2`` or ``n>=30``: what a gate requires of its metric."""
    stat = "" if gate.stat == "mean" else gate.stat
    return f"{stat}{gate.op}{gate.threshold:g}"


def gate_warnings(record: RunRecord) -> list[str]:
    """One line per gate that decides on a mean of few items (``GateEntry.warning``)."""
    return [f"warning: {g.warning}" for g in record.gates if g.warning]
