"""What a run learns while it runs (one per pytest config: ``config.stash[STATE_KEY]``).

The frozen configuration is :class:`plugins.run.config.RunConfig`; the models and the
data folder are ``fixtures.plugin.ModelSetup``; this is the rest: the suites' facts and
items as they arrive, and what stopped or broke the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from extractbench.plugins.record import Crash, ItemEntry, OtherTest, SuiteInfo
from extractbench.suites.item import Item, SuiteData

__all__ = ["RunState", "STATE_KEY", "SuiteFacts", "USAGE_PREFIX"]

# Collection errors with this prefix are usage errors the controller reports (exit 4).
USAGE_PREFIX = "extractbench usage error: "


class SuiteFacts(SuiteInfo):
    """A suite's facts in the run state: the record's :class:`SuiteInfo` and the number of
    its selected items that ``-k``, ``-m``, ``--deselect`` or ``--lf`` left out (the
    record keeps that in its selection). An xdist worker sends it as a plain dict
    (:meth:`model_dump`); the controller validates it on arrival."""

    items_deselected: int = 0

    def record_info(self) -> dict[str, Any]:
        """The record's section of this suite (:class:`SuiteInfo`'s fields), as plain
        values: the record's facts are redacted as JSON before they are validated."""
        return self.model_dump(exclude={"items_deselected"})


@dataclass
class RunState:
    """The facts of one run, in the order they arrive.

    Attributes:
        selected: suites the command's paths (or the ``--rescore`` record) select.
        whole: the command selects the whole suites package (a folder above the suites),
            so every declared gate must be evaluated.
        excluded: suites a ``--rescore`` record lacks (their tests are deselected).
        skipped: ``--skip-missing-data``: suite -> why.
        loaded: suite -> its loaded data (this process).
        suites: suite -> its facts for the record (breakdown, items total and selected,
            limit, notes, items deselected by ``-k``/``-m``/``--deselect``/``--lf``).
        collected: items a worker collected (xdist controller; before suites arrive).
        items: item id -> its record entry (the record's typed model, checked as it
            arrives).
        other_tests: node id -> the record entry of a test that is not an item.
        crashes: the record's entries of the processes that died running an item;
            ``crashed_ids`` their items.
        usage_errors: one line each (exit 4).
        interrupted: ``SIGINT`` or ``SIGTERM``, when one ended the run.
        stopped: why the run was stopped early (circuit breaker, ...).
        decided_early: ``--stop-when-decided``: suite -> how every gate of it was decided
            (its items not started are not run).
        data: data provenance for the record.
        warnings: what the run noticed but did not fail on (the record's ``warnings``,
            after the configuration's).
        sent_suites: (worker) suites whose facts went to the controller.
        run_order: ``--concurrency``: item id -> (its items in run order, its index).
        groups: group prefetch: this process's items by group, each group removed when its
            first calls were generated together (:func:`fixtures.models.prefetch.prefetch_group`).
    """

    selected: list[str] = field(default_factory=list)
    whole: bool = False
    excluded: set[str] = field(default_factory=set)
    skipped: dict[str, str] = field(default_factory=dict)
    loaded: dict[str, SuiteData] = field(default_factory=dict)
    suites: dict[str, SuiteFacts] = field(default_factory=dict)
    collected: int = 0
    items: dict[str, ItemEntry] = field(default_factory=dict)
    other_tests: dict[str, OtherTest] = field(default_factory=dict)
    usage_errors: list[str] = field(default_factory=list)
    crashes: list[Crash] = field(default_factory=list)
    crashed_ids: set[str] = field(default_factory=set)
    interrupted: str | None = None
    stopped: str | None = None
    decided_early: dict[str, str] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    sent_suites: set[str] = field(default_factory=set)
    run_order: dict[str, tuple[list[Item], int]] | None = None
    groups: dict[str, list[Item]] | None = None


STATE_KEY = pytest.StashKey[RunState]()
