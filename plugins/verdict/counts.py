"""How many of a suite's labels were not found in their document: a gateable figure, and
the lines that report it (items by outcome are counted beside the record's item entries,
:func:`plugins.record.items.outcome_counts`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["DATA_FIGURES", "data_values", "missing_label_lines"]

# a suite's facts about its data that a gate may check, as it checks a speed figure
DATA_FIGURES = ("missing_labels",)


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
