"""``--limit N``: a deterministic subset of a suite's items, stratified over an attribute."""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence

from extractbench.suites.item import Item

__all__ = ["stratified_limit", "rank"]


def rank(item_id: str) -> str:
    """The order key of an id for selections: its SHA-256 hex digest (machine-independent)."""
    return hashlib.sha256(item_id.encode("utf-8")).hexdigest()


def stratified_limit(items: Sequence[Item], limit: int, by: str | None) -> list[Item]:
    """Pick ``limit`` items, spread evenly over the values of ``item.meta[by]``.

    Within each stratum items are ranked by SHA-256 of their id; strata are visited in
    sorted order, one item each per round, until ``limit`` items are taken. The result
    depends only on the item ids, never on the machine, the worker or the run.

    Args:
        items: the suite's items.
        limit: how many to keep; ``limit >= len(items)`` keeps all.
        by: attribute of ``meta`` to stratify over; None ranks all items as one stratum.

    Returns:
        The selected items in their original order (so groups stay consecutive).

    Raises:
        ValueError: limit < 1.
    """
    if limit < 1:
        raise ValueError(f"--limit must be at least 1, got {limit}")
    if limit >= len(items):
        return list(items)
    strata: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        strata[str(item.meta.get(by)) if by else ""].append(item)
    queues = [sorted(strata[key], key=lambda it: rank(it.id)) for key in sorted(strata)]
    chosen: set[str] = set()
    round_ = 0
    while len(chosen) < limit:
        for queue in queues:
            if round_ < len(queue) and len(chosen) < limit:
                chosen.add(queue[round_].id)
        round_ += 1
    return [item for item in items if item.id in chosen]
