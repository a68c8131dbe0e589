"""The hooks of an xdist worker: write its fault report where the controller reads it,
mark itself running while it has items (its cores go to the others after its last one),
warn when ``--dist loadgroup`` does not group, skip the items of suites the controller
decided early (``--stop-when-decided``), and hand its suite facts over."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest

from extractbench.fixtures.models import core_share
from extractbench.fixtures.worker_channel import xdist_input, xdist_output
from extractbench.plugins.run.controller import WORKER_OUTPUT_KEY
from extractbench.plugins.run.crashes import FAULT_DIR_KEY, enable_fault_log
from extractbench.plugins.run.early_stop import DECIDED_DIR_KEY, decided_in, skip_decided
from extractbench.plugins.run.grouping import GroupingLost, ungrouped_items
from extractbench.plugins.run.state import RunState

__all__ = ["Worker"]


class Worker:
    """Hooks of an xdist worker."""

    def __init__(self, config: pytest.Config, state: RunState) -> None:
        self.config = config
        self.state = state

    def _given(self) -> dict[str, Any]:
        """The controller's values for this worker (registered in workers only)."""
        given = xdist_input(self.config)
        assert given is not None, "the Worker plugin runs in xdist workers"
        return given

    def pytest_sessionstart(self) -> None:
        """Write this worker's fault report where the controller reads it after a crash."""
        given = self._given()
        folder = given.get(FAULT_DIR_KEY)
        if folder:
            enable_fault_log(Path(folder), given["workerid"])
        share = given.get(core_share.CORE_SHARE_KEY)
        if share:
            core_share.join(Path(share))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """``--stop-when-decided``: an item of a suite the controller has decided is not
        run (skipped before its setup, the reason saying so)."""
        folder = self._given().get(DECIDED_DIR_KEY)
        if folder:
            skip_decided(item, decided_in(Path(folder)))

    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """After this worker's last item (xdist runs an item with no next one only once
        the controller has no more to send) its cores go to the workers still running."""
        if nextitem is None:
            core_share.leave()

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Warn (the warning travels to the controller's summary) when ``--dist loadgroup``
        is on but the items' groups did not take effect."""
        if not getattr(self.config.option, "loadgroup", False):
            return
        missing = ungrouped_items(session.items)
        if missing:
            warnings.warn(
                GroupingLost(
                    f"--dist loadgroup is not grouping ({len(missing)} items, e.g. "
                    f"{missing[0]}): pytest-xdist#1386 with pytest {pytest.__version__}; "
                    "groups run split across workers and shared prompt prefixes are "
                    'recomputed; install "pytest<9.2"'
                ),
                stacklevel=1,
            )

    def pytest_sessionfinish(self) -> None:
        core_share.leave()
        xdist_output(self.config)[WORKER_OUTPUT_KEY] = {
            name: facts.model_dump() for name, facts in self.state.suites.items()
        }
