"""Running one item: the ``run_item`` fixture a suite's test calls, and ``suite_test``.

A suite's test file holds one function and imports nothing of the plugin::

    @pytest.mark.suite("fda")
    def test_fda(bench_item, run_item):
        run_item(bench_item)

which gives the tests ``suites/fda/test_fda.py::test_fda[<item id>]`` (the node ids and
JUnit names CI keys on). ``run_item`` runs the suite's plain ``run(item, models,
options)`` and records its :class:`suites.protocol.ItemResult`. ``suite_test(NAME)``
builds the same function for a test file that prefers one line.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from extractbench.fixtures.models.prefetch import prefetch_group, requests_of
from extractbench.fixtures.models.routing import routing
from extractbench.fixtures.models.wrappers import CachingBackend
from extractbench.fixtures.nodes import bench_items
from extractbench.plugins.run.config import CONFIG_KEY, RunConfig
from extractbench.plugins.run.item_record import ItemRecorder
from extractbench.plugins.run.state import STATE_KEY, RunState
from extractbench.suites.item import Item
from extractbench.suites.model import Backend
from extractbench.suites.protocol import Models

__all__ = ["suite_test", "run_item"]


def _prefetch_ahead(
    cfg: RunConfig, state: RunState, session: pytest.Session, model: CachingBackend, item: Item
) -> None:
    """Keep the next ``concurrency`` first calls of this process's items in flight
    (``--concurrency``), this item's included: in run order where this process knows it
    (without xdist: every item, in collection order), else within the item's group (a
    group runs on one worker, consecutively; which group comes next is the scheduler's)."""
    if state.run_order is None:  # once per process
        order = [  # MINEA's first call is not its prompt: its items are not sent ahead
            it for it in bench_items(session.items) if cfg.registry.suites[it.suite].prefetch
        ]
        by_group: dict[str, list[Item]] = {}
        for it in order:
            by_group.setdefault(it.group, []).append(it)
        if not hasattr(session.config, "workerinput"):
            state.run_order = {it.id: (order, n) for n, it in enumerate(order)}
        else:
            state.run_order = {
                it.id: (group, n) for group in by_group.values() for n, it in enumerate(group)
            }
    ahead, start = state.run_order.get(item.id, ([item], 0))
    window = ahead[start : start + model.concurrency]
    model.prefetch(it.request() for it in window)


def _prefetch_group(
    state: RunState, session: pytest.Session, model: CachingBackend, item: Item
) -> None:
    """A group's first test in this process: its items' uncached first calls generated
    together through the backend's ``generate_batch`` where it batches
    (``capabilities.batching``: hf's batches or shared prefix), each cached alone and
    held for its own item (:func:`fixtures.models.prefetch.prefetch_group`)."""
    if not model.capabilities.batching:  # llama.cpp in process: one sequence, item by item
        return
    if state.groups is None:  # once per process: this process's items by group
        state.groups = {}
        for it in bench_items(session.items):
            state.groups.setdefault(it.group, []).append(it)
    group = state.groups.pop(item.group, [])  # popped: a group is prefetched once
    if len(group) > 1:
        prefetch_group(model, requests_of(group))


@pytest.fixture
def run_item(
    request: pytest.FixtureRequest, model: Backend, judge: Backend, score: ItemRecorder
) -> Callable[[Item], None]:
    """``run_item(bench_item)``: run the item through its suite and record the result."""
    cfg = request.config.stash[CONFIG_KEY]
    state = request.config.stash[STATE_KEY]

    def run(item: Item) -> None:
        suite = cfg.registry.suites[item.suite]
        if suite.prefetch and isinstance(model, CachingBackend):
            if model.concurrency > 1:  # a server: requests in flight
                _prefetch_ahead(cfg, state, request.session, model, item)
            else:  # in process: a group's calls in one batch where the backend batches
                _prefetch_group(state, request.session, model, item)
        with routing(item.group):  # several endpoints: a group stays on one
            options = suite.parse_options(cfg.suite_options[item.suite])
            result = suite.run(item, Models(model, judge), options)
        score.record(result)

    return run


def suite_test(name: str) -> Callable[..., None]:
    """The test function of suite ``name`` (marked ``@pytest.mark.suite(name)``).

    Args:
        name: a suite registered through the ``extractbench.suites`` entry points or the
            ``pytest_extractbench_suites`` hook.
    """

    def test(bench_item: Item, run_item: Callable[[Item], None]) -> None:
        run_item(bench_item)

    test.__name__ = test.__qualname__ = f"test_{name}"
    test.__doc__ = f"One item of the {name} suite: run it and record its scores."
    return pytest.mark.suite(name)(test)
