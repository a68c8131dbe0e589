"""How many items passed, failed and were skipped, counted once for every reader: the run
record's ``counts``, the gates (a suite with items not scored fails closed) and the JUnit
file; and how many of a suite's labels were not found in their document (a gateable
figure)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

__all__ = ["DATA_FIGURES", "OutcomeCounts", "data_values", "missing_label_lines", "outcome_counts"]

# a suite's facts about its data that a gate may check, as it checks a speed figure
DATA_FIGURES = ("missing_labels",)


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


def data_values(suites: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """``suite/missing_labels`` -> ``{"mean": labels not found, "n": labels read}`` for every
    suite whose facts the run holds (the record's ``suites``: ``missing_labels``,
    ``items_total``), as a gate reads a metric (a count has no interval)."""
    out = {}
    for name, info in suites.items():
        missing = len(info.missing_labels)
        out[f"{name}/missing_labels"] = {
            "mean": float(missing),
            "n": (info.items_total or 0) + missing,
        }
    return out


def missing_label_lines(suites: Mapping[str, Any], shown: int = 5) -> list[str]:
    """One line per suite with labels not found in their document: how many of how many,
    that they are no items, and the first ``shown`` of where they are."""
    lines = []
    for name, info in sorted(suites.items()):
        where = list(info.missing_labels)
        if not where:
            continue
        read = (info.items_total or 0) + len(where)
        more = f" and {len(where) - shown} more" if len(where) > shown else ""
        lines.append(
            f"{name}: {len(where)} of {read} labels not found in their document, so not items "
            f"(n is {read - len(where)}; gate {name}/missing_labels<=0 refuses them): "
            f"{', '.join(where[:shown])}{more}"
        )
    return lines
