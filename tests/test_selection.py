from __future__ import annotations

import random
from collections import Counter

import pytest

from extractbench.plugins.run.selection import stratified_limit
from extractbench.suites.item import Item


def make(n_keys: int = 4, per_key: int = 10) -> list[Item]:
    return [
        Item(
            id=f"s/d{d}/k{k}",
            group=f"s/d{d}",
            prefix="p",
            suffix="",
            reference="r",
            meta={"key": f"k{k}"},
        )
        for d in range(per_key)
        for k in range(n_keys)
    ]


def test_limit_spreads_over_strata_and_keeps_order():
    items = make()
    chosen = stratified_limit(items, 10, "key")
    counts = Counter(it.meta["key"] for it in chosen)
    assert sorted(counts.values()) == [2, 2, 3, 3]
    positions = [items.index(it) for it in chosen]
    assert positions == sorted(positions)


def test_limit_depends_only_on_ids_not_on_input_order():
    items = make()
    shuffled = items[:]
    random.Random(3).shuffle(shuffled)
    chosen = {i.id for i in stratified_limit(items, 7, "key")}
    assert chosen == {i.id for i in stratified_limit(shuffled, 7, "key")}
    assert chosen != {i.id for i in items[:7]}


def test_small_stratum_is_exhausted_then_others_fill():
    items = make(n_keys=2, per_key=5) + [
        Item(id="s/x/rare", group="s/x", prefix="p", suffix="", reference="r", meta={"key": "rare"})
    ]
    chosen = stratified_limit(items, 9, "key")
    assert Counter(it.meta["key"] for it in chosen) == {"rare": 1, "k0": 4, "k1": 4}


def test_limit_bounds():
    items = make()
    assert stratified_limit(items, 1000, "key") == items
    with pytest.raises(ValueError):
        stratified_limit(items, 0, "key")
