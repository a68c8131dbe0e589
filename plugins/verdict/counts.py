"""How many items passed, failed and were skipped, counted once for every reader: the run
record's ``counts``, the gates (a suite with items not scored fails closed) and the JUnit
file."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, NamedTuple

__all__ = ["OutcomeCounts", "outcome_counts"]


class OutcomeCounts(NamedTuple):
    """Items by outcome, the one count the record's ``counts``, the verdict's gates and the
    JUnit file read: ``scored`` (passed), ``failed``, ``skipped``, and per suite the items
    not scored (failed or skipped: a gate on that suite fails closed)."""

    scored: int
    failed: int
    skipped: int
    not_scored_by_suite: dict[str, int]


def outcome_counts(items: Iterable[Any]) -> OutcomeCounts:
    """:class:`OutcomeCounts` of ``items`` (the record's item entries: ``outcome``,
    ``suite``)."""
    by_outcome: Counter[str] = Counter()
    not_scored: Counter[str] = Counter()
    for it in items:
        by_outcome[it.outcome] += 1
        if it.outcome != "passed":
            not_scored[it.suite] += 1
    return OutcomeCounts(
        by_outcome["passed"], by_outcome["failed"], by_outcome["skipped"], dict(not_scored)
    )
