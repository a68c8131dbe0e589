"""The rows of the HTML page's per-item view: what each item was asked, answered and scored,
and the status its filters use (failed, passed yet scored 0, passed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from extractbench.plugins.outputs.metric_facts import MetricFacts
from extractbench.plugins.record import ItemEntry

__all__ = ["ItemRow", "item_rows", "as_text", "score_text", "STATUS_LABELS"]

# the words the page shows for a row's status: an item that scored 0 is never plainly "passed"
STATUS_LABELS = {
    "failed": "failed",
    "zero": "passed, scored 0",
    "passed": "passed",
    "skipped": "skipped",
}


def as_text(value: Any) -> str:
    """A prediction or reference as text: a string as it is, None as "", anything else a
    record may hold (an object, a list: a table, a MINEA extraction) as JSON."""
    import json

    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def score_text(value: Any) -> str:
    """A score as the item table shows it: ``0.500``, ``–`` for None, else its text."""
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, int | float) else as_text(value)


@dataclass(frozen=True)
class ItemRow:
    """One item of the per-item view.

    Attributes:
        status: ``failed``, ``zero`` (passed, every higher-is-better score 0:
            :meth:`MetricFacts.is_zero`), ``passed`` or ``skipped``.
        scores: (metric, shown value, self-judged) per score.
        cache: ``hit`` (every model call answered from the cache or a record), ``partial``,
            ``miss``, or ``–`` (no call logged).
    """

    entry: ItemEntry
    status: str
    scores: list[tuple[str, str, bool]]
    cache: str
    calls: int

    @property
    def label(self) -> str:
        """The status as the page words it (:data:`STATUS_LABELS`)."""
        return STATUS_LABELS[self.status]

    @property
    def metrics(self) -> str:
        """The metrics it has a score for, space-separated (the metric filter reads it)."""
        return " ".join(m for m, v in self.entry.scores.items() if v is not None)


def _cache(calls: list[dict[str, Any]]) -> str:
    if not calls:
        return "–"
    cached = sum(bool(c.get("cached")) for c in calls)
    return "hit" if cached == len(calls) else ("partial" if cached else "miss")


def item_rows(items: list[ItemEntry], facts: MetricFacts) -> list[ItemRow]:
    """The per-item view's rows, in the record's order."""
    rows = []
    for it in items:
        status = "zero" if facts.is_zero(it) else it.outcome
        scores = [
            (m, score_text(v), f"{it.suite}/{m}" in facts.self_judged) for m, v in it.scores.items()
        ]
        rows.append(ItemRow(it, status, scores, _cache(it.calls), len(it.calls)))
    return rows
