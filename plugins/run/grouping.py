"""Check that ``--dist loadgroup`` really groups: pytest-xdist schedules an item by the
``@<group>`` suffix it appends to the item's node id in each worker. Where that suffix
does not take effect (pytest-xdist#1386, pytest 9.2 with pytest-xdist 3.8), every item
becomes its own unit: the items of one FDA chunk land on different workers and each of
them prefills the whole chunk again. Nothing fails: the run is slower, and a few greedy
generations may differ (a reused prefix is computed slightly differently from a fresh
prefill). This module turns that silent loss into a warning."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

__all__ = ["GroupingLost", "ungrouped_items"]


class GroupingLost(pytest.PytestWarning):
    """``--dist loadgroup`` is in effect but xdist_group items are not grouped."""


def ungrouped_items(items: Iterable[pytest.Item]) -> list[str]:
    """Node ids of items marked ``xdist_group`` that the loadgroup scheduler will not group:
    it takes the text after an ``@`` that follows the last ``]`` as the group
    (``LoadGroupScheduling._split_scope``); call in a worker, after collection.

    Returns:
        the offending node ids, in collection order (empty when grouping works).
    """
    return [
        item.nodeid
        for item in items
        if item.get_closest_marker("xdist_group") is not None
        and item.nodeid.rfind("@") <= item.nodeid.rfind("]")
    ]
