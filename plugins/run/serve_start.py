"""``--serve`` in the controller (or the one pytest process): the server planned at configure
started once the run's items are known, sized for them, and watched.

At session start, after the data is chosen and before a worker starts, the selected items
are loaded (as collection will load them: the derived-data cache makes that cheap) and the
server started with slots of the context they need (:func:`fixtures.served.start_planned`).
A server that dies while the run needs it stops the run within seconds: the record says
why (its pid and the signal or exit status), the run is INCOMPLETE (exit 1), and the
answers it gave before are in the generation cache for the next run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import pytest

from extractbench.fixtures.plugin import ModelSetup
from extractbench.fixtures.served import start_planned
from extractbench.plugins.run.collection import selected_items
from extractbench.plugins.run.config import RunConfig
from extractbench.plugins.run.state import RunState
from extractbench.suites.model import ModelError

if TYPE_CHECKING:
    from xdist.dsession import DSession  # pytest-xdist's controller plugin

__all__ = ["ServeStart"]


class ServeStart:
    """Starts and watches the ``--serve`` server (registered where the server is planned)."""

    def __init__(self, config: pytest.Config, cfg: RunConfig, state: RunState, setup: ModelSetup) -> None:  # fmt: skip
        self.config, self.cfg, self.state, self.setup = config, cfg, state, setup
        self.session: pytest.Session | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """After the controller chose the data (its hook runs first), before xdist starts
        the workers (its hook runs last): the server, up and answering."""
        self.session = session
        plan = self.setup.serve_plan
        if plan is None or self.setup.server is not None:
            return
        items = selected_items(self.cfg, self.state, self.setup.data_dir)
        try:
            self.setup.server = start_planned(plan, self.setup.options, items)
        except ModelError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.setup.server.watch(self._died)

    def _died(self, line: str) -> None:
        """The watcher's thread: the run stops after the items now running."""
        if self.state.stopped is None:
            self.state.stopped = line
        dsession = cast("DSession | None", self.config.pluginmanager.getplugin("dsession"))
        for holder in (self.session, dsession):
            if holder is not None and not getattr(holder, "shouldstop", False):
                holder.shouldstop = line
