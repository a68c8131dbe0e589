"""The parametrized pytest test of a registered suite: one line in the suite's test file.

``test_fda = suite_test("fda")`` in ``suites/fda/test_fda.py`` gives the test whose items
are ``suites/fda/test_fda.py::test_fda[<item id>]`` (the node ids and JUnit names CI keys
on). Each item runs the suite's plain ``run(item, models, options)`` and records its
:class:`suites.protocol.ItemResult`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from fixtures.models.routing import routing
from fixtures.models.wrappers import CachingBackend
from fixtures.nodes import bench_items
from plugins.run.recorder import ItemRecorder
from plugins.run.state import STATE_KEY, RunState
from suites.item import Item
from suites.protocol import Models

__all__ = ["suite_test"]


def _prefetch_ahead(
    state: RunState, session: pytest.Session, model: CachingBackend, item: Item
) -> None:
    """Keep the next ``concurrency`` first calls of this process's items in flight
    (``--concurrency``), this item's included: in run order where this process knows it
    (without xdist: every item, in collection order), else within the item's group (a
    group runs on one worker, consecutively; which group comes next is the scheduler's)."""
    if state.run_order is None:  # once per process
        order = [  # MINEA's first call is not its prompt: its items are not sent ahead
            it for it in bench_items(session.items) if state.registry.get(it.suite).prefetch
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
    model.prefetch((it.prompt, it.max_tokens, it.stop, it.group) for it in window)


def suite_test(name: str) -> Callable[..., None]:
    """The test function of suite ``name`` (marked ``@pytest.mark.suite(name)``).

    Args:
        name: a suite registered through the ``extractbench.suites`` entry points or the
            ``pytest_extractbench_suites`` hook.
    """

    def test(bench_item: Item, model, judge, score: ItemRecorder, request) -> None:  # noqa: ANN001
        state = request.config.stash[STATE_KEY]
        suite = state.registry.get(name)
        if suite.prefetch and isinstance(model, CachingBackend) and model.concurrency > 1:
            _prefetch_ahead(state, request.session, model, bench_item)
        with routing(bench_item.group):  # several endpoints: a group stays on one
            result = suite.run(bench_item, Models(model, judge), state.options[name])
        score.record(result)

    test.__name__ = test.__qualname__ = f"test_{name}"
    test.__doc__ = f"One item of the {name} suite: run it and record its scores."
    return pytest.mark.suite(name)(test)
