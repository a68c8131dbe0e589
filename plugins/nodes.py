"""The benchmark item a pytest test node runs (its ``bench_item`` parameter)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from suites.item import Item

__all__ = ["bench_item_of", "bench_items"]


def bench_item_of(node: Any) -> Item | None:
    """The :class:`Item` a test node is parametrized with, or None (a plain test, or a
    suite's ``no-data`` placeholder)."""
    callspec = getattr(node, "callspec", None)
    item = callspec.params.get("bench_item") if callspec else None
    return item if isinstance(item, Item) else None


def bench_items(nodes: Iterable[Any]) -> list[Item]:
    """The items of those nodes that run one, in node order."""
    return [item for item in map(bench_item_of, nodes) if item is not None]
