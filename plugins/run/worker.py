"""The hooks of an xdist worker: write its fault report where the controller reads it,
mark itself running while it has items (its cores go to the others after its last one),
warn when ``--dist loadgroup`` does not group, skip the items of suites the controller
decided early (``--stop-when-decided``), and hand its suite facts over."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from extractbench.fixtures.models import core_share
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

    def pytest_sessionstart(self) -> None:
        """Write this worker's fault report where the controller reads it after a crash."""
        folder = self.config.workerinput.get(FAULT_DIR_KEY)  # type: ignore[attr-defined]
        if folder:
            enable_fault_log(Path(folder), self.config.workerinput["workerid"])  # type: ignore[attr-defined]
        share = self.config.workerinput.get(core_share.CORE_SHARE_KEY)  # type: ignore[attr-defined]
        if share:
            core_share.join(Path(share))

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """``--stop-when-decided``: an item of a suite the controller has decided is not
        run (skipped before its setup, the reason saying so)."""
        folder = self.config.workerinput.get(DECIDED_DIR_KEY)  # type: ignore[attr-defined]
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
        self.config.workeroutput[WORKER_OUTPUT_KEY] = {  # type: ignore[attr-defined]
            name: facts.model_dump() for name, facts in self.state.suites.items()
        }
