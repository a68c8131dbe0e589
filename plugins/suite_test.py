"""The parametrized pytest test of a registered suite: one line in the suite's test file.

``test_fda = suite_test("fda")`` in ``suites/fda/test_fda.py`` gives the test whose items
are ``suites/fda/test_fda.py::test_fda[<item id>]`` (the node ids and JUnit names CI keys
on). Each item runs the suite's plain ``run(item, models, options)`` and records its
:class:`suites.protocol.ItemResult`.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from plugins.recorder import ItemRecorder
from plugins.state import STATE_KEY
from suites.item import Item
from suites.protocol import Models

__all__ = ["suite_test"]


def suite_test(name: str) -> Callable[..., None]:
    """The test function of suite ``name`` (marked ``@pytest.mark.suite(name)``).

    Args:
        name: a suite registered through the ``extractbench.suites`` entry points or the
            ``pytest_extractbench_suites`` hook.
    """

    def test(bench_item: Item, model, judge, score: ItemRecorder, request) -> None:  # noqa: ANN001
        state = request.config.stash[STATE_KEY]
        suite = state.registry.get(name)
        result = suite.run(bench_item, Models(model, judge), state.options[name])
        score.record(result)

    test.__name__ = test.__qualname__ = f"test_{name}"
    test.__doc__ = f"One item of the {name} suite: run it and record its scores."
    return pytest.mark.suite(name)(test)
