"""``--stop-when-decided`` in the process that aggregates: decide each gated suite as its
items arrive, and stop it once every gate of it is decided.

The controller feeds each arriving item to its suite's
:class:`plugins.verdict.sequential_gates.SuiteSequence` (the run order travels with the
suite's facts, :mod:`plugins.run.run_order`), and xdist hands the groups out in that
order (``--dist loadgroup`` without its largest-first reordering). Once every gate of a
suite is decided, its items that have not started are not run: without xdist this process
skips them before their setup; under xdist each worker finishes the item it holds and
skips the suite's items it was sent (a file per decided suite in a folder the controller
shares with its workers), and once every suite of the run is decided the controller hands
out nothing more (``DSession.triggershutdown``: the workers end as at the end of a run). The
items left are "not run: decided early" in the record (:func:`not_run`), never passed or
skipped silently; the verdict decides the gates again from the record
(:func:`plugins.verdict.decide`) and the exit status is its own.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from extractbench.fixtures.nodes import bench_item_of
from extractbench.plugins.run.config import RunConfig
from extractbench.plugins.run.item_record import ITEM_ENTRY
from extractbench.plugins.run.state import RunState
from extractbench.plugins.verdict.baseline import item_scores
from extractbench.plugins.verdict.sequential_gates import SuiteSequence, regression_of
from extractbench.suites.item import Item

if TYPE_CHECKING:
    from xdist.dsession import DSession  # pytest-xdist's controller plugin

__all__ = ["EarlyStop", "DECIDED_DIR_KEY", "skip_decided", "decided_in", "in_run_order", "not_run"]

DECIDED_DIR_KEY = "extractbench_decided_dir"
NOT_RUN = "not run: decided early"
NOT_RUN_SUMMARY = "not run (decided early)"  # the word of pytest's summary line


def decided_marker(folder: Path, suite: str) -> Path:
    """The file whose presence tells the workers that ``suite`` is decided (it holds the
    line saying how)."""
    return folder / hashlib.sha256(suite.encode("utf-8")).hexdigest()[:24]


def decided_in(folder: Path) -> Callable[[str], str | None]:
    """Suite -> how it was decided, read from the controller's files (a worker's view)."""

    def line(suite: str) -> str | None:
        try:
            return decided_marker(folder, suite).read_text(encoding="utf-8") or "decided"
        except FileNotFoundError:
            return None

    return line


def skip_decided(item: pytest.Item, decided: Callable[[str], str | None]) -> None:
    """Skip a benchmark item before its setup when its suite is decided.

    Args:
        item: the test about to run.
        decided: suite -> the line saying how it was decided, or None.
    """
    bench = bench_item_of(item)
    if isinstance(bench, Item):
        line = decided(bench.suite)
        if line:
            pytest.skip(f"{NOT_RUN}: {line}")


def in_run_order(option: Any) -> str | None:
    """Make xdist hand the groups out in run order; say how, or None when it already does.

    xdist's ``--dist load`` (pytest's default with ``-n``) sends each worker a block of
    about ``1/(4 workers)`` of the items at once, so the second worker starts a quarter of
    the way down the order and its items cannot enter the sequence until every group
    before them has run; ``loadscope``, ``loadfile``, ``worksteal`` and ``each`` do not keep
    the order either. ``--dist loadgroup`` hands out one group at a time, in collection
    order (its largest-first reordering is turned off by :class:`EarlyStop`). Kept as they
    are: no xdist, ``loadgroup`` already, and ``load`` one item at a time
    (``--maxschedchunk 1``, what a one-slot ``--serve`` server sets), which is in order.

    Args:
        option: pytest's ``config.option`` (the controller's, before the workers start:
            xdist sends them its values).
    """
    dist = getattr(option, "dist", "no")
    if dist in ("no", "loadgroup") or not getattr(option, "numprocesses", None):
        return None
    if dist == "load" and getattr(option, "maxschedchunk", None) == 1:
        return None
    option.dist = "loadgroup"
    return (
        f"--stop-when-decided: running with --dist loadgroup instead of --dist {dist}, so the "
        "groups go to the workers in the random run order"
    )


def not_run(state: RunState) -> dict[str, list[str]]:
    """Suite -> its items in run order that did not run because it was decided early."""
    out = {}
    for suite in state.decided_early:
        order = state.suites[suite].run_order
        if order is not None:
            out[suite] = [i for group in order.groups for i in group if i not in state.items]
    return out


class EarlyStop:
    """The early stop's hooks in the aggregating process (see the module docstring).

    Args:
        config, cfg, state: the run's.
        event: writes a progress line (the controller's).
    """

    def __init__(
        self, config: pytest.Config, cfg: RunConfig, state: RunState, event: Callable[[str], None]
    ) -> None:
        self.config, self.cfg, self.state, self.event = config, cfg, state, event
        self.sequences: dict[str, SuiteSequence] = {}
        self._baseline: dict[str, dict[str, float]] | None = None  # suite/metric -> id -> score
        self.folder: Path | None = None  # made for the first xdist worker
        self.scheduling = in_run_order(config.option)
        # xdist's loadgroup (and loadscope, loadfile) hand out the largest groups first:
        # they must go out in run order, or the sequence waits for the small ones at the end
        if getattr(config.option, "loadscopereorder", False):
            config.option.loadscopereorder = False

    def pytest_sessionstart(self) -> None:
        reporter = cast(
            "pytest.TerminalReporter | None", self.config.pluginmanager.getplugin("terminalreporter")
        )
        if self.scheduling and reporter is not None:
            reporter.write_line(self.scheduling)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        if self.folder is None:
            self.folder = Path(tempfile.mkdtemp(prefix="extractbench-decided-"))
        node.workerinput[DECIDED_DIR_KEY] = str(self.folder)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        """pytest's summary line counts the items not run, ``N not run (decided early)``,
        instead of counting those a worker was sent as skipped and leaving out the rest."""
        left = sum(len(ids) for ids in not_run(self.state).values())
        if not left:
            return
        stats = terminalreporter.stats
        stats["skipped"] = [r for r in stats.get("skipped", []) if NOT_RUN not in str(r.longrepr)]
        if not stats["skipped"]:
            del stats["skipped"]
        stats[NOT_RUN_SUMMARY] = [NOT_RUN] * left
        # pytest caches the categories of its summary line as reports arrive: recount
        if hasattr(terminalreporter, "_known_types"):
            terminalreporter._known_types = None

    def pytest_unconfigure(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        """Without xdist this process runs the items: a decided suite's are skipped."""
        skip_decided(item, self.state.decided_early.get)

    @pytest.hookimpl(trylast=True)  # after the controller took the suite's facts and the item
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        entry = ITEM_ENTRY.get(report)
        if entry is None or entry["suite"] in self.state.decided_early:
            return
        sequence = self._sequence(entry["suite"])
        if sequence is None:
            return
        scored = entry.get("outcome", "passed") == "passed"
        sequence.add(entry["id"], scored, entry.get("scores") or {}, entry.get("meta"))
        if sequence.decided:
            self._decided(entry["suite"], sequence)

    def _sequence(self, suite: str) -> SuiteSequence | None:
        if suite not in self.sequences:
            facts = self.state.suites.get(suite)
            if facts is None or facts.run_order is None:
                return None  # a suite that runs every item (or whose facts did not arrive)
            gates = [g for g in self.cfg.gates.thresholds if g.suite == suite]
            base, limit = self.cfg.gates.baseline, self.cfg.gates.max_regression
            regression = None
            if base is not None and limit is not None:
                if self._baseline is None:
                    self._baseline = item_scores(base.as_dict())
                regression = regression_of(self._baseline, suite, limit)
            self.sequences[suite] = SuiteSequence(facts.run_order, gates, regression=regression)
        return self.sequences[suite]

    def _decided(self, suite: str, sequence: SuiteSequence) -> None:
        left = sequence.population - sequence.n
        line = (
            f"every gate of {suite} decided after {sequence.n:,} of {sequence.population:,} items"
        )
        self.state.decided_early[suite] = line
        if self.folder is not None:
            decided_marker(self.folder, suite).write_text(line, encoding="utf-8")
        if left:
            self.event(f"{line}: its other {left:,} items are not run (--stop-when-decided)")
        selected = [s for s in self.state.selected if s not in self.state.skipped]
        items = sum(
            self.state.suites[s].items_selected or 0 for s in selected if s in self.state.suites
        )
        everything = not self.state.collected or self.state.collected == items
        if everything and all(s in self.state.decided_early for s in selected):
            dsession = cast("DSession | None", self.config.pluginmanager.getplugin("dsession"))
            if dsession is not None:  # the workers end once their items are done or skipped
                dsession.triggershutdown()
