"""The hooks of the process that aggregates: the xdist controller, or the only process.

It learns which suites run and where their data is (session start), receives every
item's record inside its test report (xdist workers send them), notes what breaks the
run (usage errors, crashes, signals, a circuit breaker), and at the end hands everything
to :func:`plugins.run.finish.finish_run`. Workers only hand their suite facts over
(:mod:`plugins.run.worker`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from extractbench.fixtures.models.core_share import CORE_SHARE_KEY, shares_cores
from extractbench.fixtures.plugin import ModelSetup, workers
from extractbench.fixtures.worker_channel import ReportField
from extractbench.plugins.outputs.formats import FORMATS
from extractbench.plugins.outputs.terminal import summary_lines
from extractbench.plugins.outputs.write import Targets, Written
from extractbench.plugins.record import Crash, ItemEntry, OtherTest
from extractbench.plugins.run.config import RunConfig
from extractbench.plugins.run.crashes import (
    CRASH_FAULT,
    CRASH_WORKER,
    FAULT_DIR_KEY,
    crash_message,
    crashed_item_entry,
    enable_fault_log,
    read_fault,
)
from extractbench.plugins.run.data import prepare_data, select_suites
from extractbench.plugins.run.finish import finish_run, is_benchmark_run
from extractbench.plugins.run.item_record import ITEM_ENTRY, error_line, item_id_of
from extractbench.plugins.run.progress import Heartbeat, Progress, uncaptured
from extractbench.plugins.run.signals import StopSignals
from extractbench.plugins.run.state import USAGE_PREFIX, RunState, SuiteFacts
from extractbench.plugins.verdict.exit_codes import NOTHING_MEASURED
from extractbench.suites.files import path_kind
from extractbench.suites.locks import OutputBusy, OutputLocks

if TYPE_CHECKING:
    from xdist.dsession import DSession  # pytest-xdist's controller plugin

__all__ = ["Controller", "WORKER_OUTPUT_KEY", "SUITE_FACTS", "MODEL_EVENTS", "locked_outputs"]

WORKER_OUTPUT_KEY = "extractbench_suites"
# a worker's first item report of a suite carries the suite's facts (name -> SuiteFacts'
# model_dump, None before the suite loaded), and an item's report the model loads since
# the last one (their progress lines)
SUITE_FACTS = ReportField[dict[str, dict[str, Any] | None]]("extractbench_suite")
MODEL_EVENTS = ReportField[list[str]]("extractbench_events")


def locked_outputs(targets: Targets) -> list[Path]:
    """The paths the run locks from its start: each locked format's (a folder's lock sits
    beside it), but a character device (``/dev/null``: written in place, with no lock
    file) and the file system's root (no name to put a lock beside)."""
    paths = (targets.paths.get(f.name) for f in FORMATS if f.locked)
    return [
        p for p in paths
        if p and path_kind(p) != "character device" and Path(os.path.abspath(p)).name
    ]  # fmt: skip


class Controller:
    """Hooks of the aggregating process (see the module docstring)."""

    def __init__(
        self, config: pytest.Config, cfg: RunConfig, state: RunState, setup: ModelSetup,
        journal: Path | None,
    ) -> None:  # fmt: skip
        self.config, self.cfg, self.state, self.setup = config, cfg, state, setup
        self.session: pytest.Session | None = None
        self.written: Written | None = None
        self.signals = StopSignals()  # the first ends the run, later ones are absorbed
        # where each process that runs items writes its faulthandler report
        # (plugins/run/crashes.py); a supervised run (plugins/run/supervisor.py) gives its journal
        self._own_fault_dir = journal is None
        self.fault_dir = journal or Path(tempfile.mkdtemp(prefix="extractbench-faults-"))
        self.core_share: Path | None = None  # made for the first xdist worker
        # every output of this run, locked from now to the last write (suites/locks.py):
        # a second run on the same paths stops at once instead of replacing this one's
        try:
            self.output_locks = OutputLocks(locked_outputs(cfg.targets)).acquire(
                skip_unwritable=True
            )
        except OutputBusy as exc:
            raise pytest.UsageError(str(exc)) from None
        self.progress = Progress(cfg.progress_s, self._progress_line)
        self.heartbeat: Heartbeat | None = None
        self._session_started = time.monotonic()
        self._collection_said = False

    def _progress_line(self, line: str) -> None:
        reporter = cast(
            "pytest.TerminalReporter | None", self.config.pluginmanager.getplugin("terminalreporter")
        )
        if reporter is None:
            return
        # the timer writes while an item runs in this process, whose output pytest
        # captures: released for the line, as pytest's live logging does
        with uncaptured(self.config):
            if getattr(getattr(reporter, "_tw", None), "width_of_current_line", 0):
                reporter.write("\n")  # after the progress dots of -q and xdist
            reporter.write_line(line)

    def pytest_unconfigure(self) -> None:
        self.output_locks.release()
        self.signals.release()
        if self._own_fault_dir:
            shutil.rmtree(self.fault_dir, ignore_errors=True)
        if self.core_share is not None:
            shutil.rmtree(self.core_share, ignore_errors=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: each worker writes its fault report into the run's fault folder and,
        without ``--threads``, marks itself running in the run's core-share folder
        (:mod:`fixtures.models.core_share`)."""
        node.workerinput[FAULT_DIR_KEY] = str(self.fault_dir)
        if shares_cores(workers(self.config), self.setup.options.threads):
            if self.core_share is None:
                self.core_share = Path(tempfile.mkdtemp(prefix="extractbench-cores-"))
            node.workerinput[CORE_SHARE_KEY] = str(self.core_share)

    def _stop(self, reason: str) -> None:
        """Stop the run after the items now running (serial and under xdist)."""
        if self.session is not None and not self.session.shouldstop:
            self.session.shouldstop = reason
        dsession = cast("DSession | None", self.config.pluginmanager.getplugin("dsession"))
        if dsession is not None and not dsession.shouldstop:
            dsession.shouldstop = reason

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Before any worker starts: the selected suites and their data."""
        self.session = session
        if not getattr(self.config.option, "numprocesses", None):  # this process runs items
            enable_fault_log(self.fault_dir, "main")
        select_suites(self.config, self.cfg, self.state)
        prepare_data(self.config, self.cfg, self.state, self.setup)
        self._session_started = time.monotonic()
        if self.state.selected:
            self.progress.collection(started=True)
            # pytest's [NN%] counts every report against the items collected, so the
            # verdict's gate cases and re-run items push it past 100%; the progress
            # lines count the items themselves
            reporter = cast(
                "pytest.TerminalReporter | None",
                self.config.pluginmanager.getplugin("terminalreporter"),
            )
            if reporter is not None and hasattr(reporter, "_show_progress_info"):
                reporter._show_progress_info = False
            self.heartbeat = Heartbeat(self.progress).start()

    def _collected(self, count: int) -> None:
        if self.state.selected and not self._collection_said:
            self._collection_said = True
            self.progress.collection(started=False)
            took = time.monotonic() - self._session_started
            self.progress.event(f"collected {count:,} items in {took:.1f} s")

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if not getattr(self.config.option, "numprocesses", None):
            self._collected(len(session.items))

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        if self.state.selected:
            self.progress.started(nodeid)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A collection error (a worker's too) is a usage error: bad data, a suite without
        items, an unknown suite. The run stops at once."""
        if not report.failed:
            return
        text = str(report.longrepr).strip()
        if USAGE_PREFIX in text:
            line = text.split(USAGE_PREFIX, 1)[1].splitlines()[0]
        else:
            line = f"{report.nodeid or 'collection'}: {(text.splitlines() or ['error'])[-1]}"
        if line not in self.state.usage_errors:
            self.state.usage_errors.append(line)
        self._stop(f"usage error: {line}")

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any) -> None:
        """A process died while running ``crashitem`` (an xdist worker; without xdist, the
        supervised pytest process): record it as failed, naming the process, the signal,
        the top frame and the library from its fault report, in the record, the report
        (JUnit, terminal) and a terminal line now. A re-run of the item does not hide it."""
        node = getattr(report, "node", None)
        worker = CRASH_WORKER.get(report) or getattr(getattr(node, "gateway", None), "id", "?")
        fault = CRASH_FAULT.get(report) or read_fault(self.fault_dir, worker)
        message = crash_message(worker, crashitem, fault)
        item_id = item_id_of(crashitem)
        self.state.crashes.append(
            Crash(item=item_id, nodeid=crashitem, worker=worker, message=message,
                  signal=fault.get("signal"), frame=fault.get("frame"),
                  library=fault.get("library"), fault_report=fault.get("report", ""))
        )  # fmt: skip
        self.state.crashed_ids.add(item_id)
        self.state.items[item_id] = ItemEntry.model_validate(
            crashed_item_entry(item_id, crashitem, message)
        )
        report.longrepr = message + (f"\n\n{fault['report']}" if fault.get("report") else "")
        report.when = "call"  # xdist says "???": JUnit would call it a setup error
        reporter = cast(
            "pytest.TerminalReporter | None", self.config.pluginmanager.getplugin("terminalreporter")
        )
        if reporter is not None:
            reporter.write_line(f"extractbench: {message}", red=True, bold=True)

    def _other_test(self, report: pytest.TestReport) -> None:
        """A test that is not an item (a plain test beside the suites): its outcome."""
        if report.nodeid.startswith(("gate::", "regression::")) or "suite" in report.keywords:
            return  # a verdict case, or a suite's test without items (an empty selection)
        if item_id_of(report.nodeid) in self.state.crashed_ids:
            return
        seen = self.state.other_tests.get(report.nodeid)
        if report.when == "call" or report.failed or (report.skipped and seen is None):
            if seen is not None and seen.outcome == "failed":
                return
            self.state.other_tests[report.nodeid] = OtherTest(
                nodeid=report.nodeid,
                outcome="failed" if report.failed else report.outcome,
                duration_s=round(float(report.duration), 3),
                error=error_line(report) if report.failed else None,
            )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, info in (SUITE_FACTS.get(report) or {}).items():
            if info is not None and name not in self.state.suites:
                self.state.suites[name] = SuiteFacts.model_validate(info)
        for event in MODEL_EVENTS.get(report) or ():
            self.progress.event(event)
        entry = ITEM_ENTRY.get(report)
        if entry is None:
            self._other_test(report)
            return
        if entry["id"] in self.state.crashed_ids:
            return
        totals = {name: facts.items_selected for name, facts in self.state.suites.items()}
        self.progress.item(entry, report.duration, totals, report.nodeid)
        if entry["id"] not in self.state.items or report.failed:
            self.state.items[entry["id"]] = ItemEntry.model_validate(entry)
        stop = entry.get("stop")
        if stop and stop["kind"] == "model_load":
            if stop["message"] not in self.state.usage_errors:
                self.state.usage_errors.append(stop["message"])
            self._stop(stop["message"])
        elif stop and not self.state.stopped:
            self.state.stopped = stop["message"]
            self._stop(stop["message"])

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        value = excinfo.value
        if self.signals.received:
            self.state.interrupted = self.signals.received
        elif type(value) is KeyboardInterrupt or "keyboard-interrupt" in str(value):
            self.state.interrupted = "SIGINT"  # Ctrl-C here, or in a worker (xdist says so)
        # else: pytest's or xdist's Interrupted for a stop we asked for or collection errors

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """``--dist loadgroup`` with recovery from a crashed worker that cannot hang."""
        if getattr(config.option, "dist", "no") != "loadgroup":
            return None
        from extractbench.plugins.run.scheduling import CrashSafeLoadGroupScheduling

        return CrashSafeLoadGroupScheduling(config, log)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.state.collected = len(ids)
        self._collected(len(ids))
        self.progress.expect(ids, self.cfg.registry.suites)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {}) or {}
        for name, info in output.get(WORKER_OUTPUT_KEY, {}).items():
            if name not in self.state.suites:
                self.state.suites[name] = SuiteFacts.model_validate(info)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.signals.finishing = True
        if self.signals.received and not self.state.interrupted:
            # caught by our handler, whatever became of the KeyboardInterrupt it raised
            # (xdist turns a worker's into its own Interrupted)
            self.state.interrupted = self.signals.received
        if self.heartbeat is not None:
            self.heartbeat.stop()
        if self.config.option.collectonly and (self.state.selected or self.state.suites):
            session.exitstatus = NOTHING_MEASURED  # a listing of items measured nothing
        if self.config.option.collectonly or not is_benchmark_run(self.config, self.state):
            return
        self.written = finish_run(self.config, self.cfg, self.state, self.setup, session)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.config.option.collectonly and (self.state.selected or self.state.suites):
            terminalreporter.write_line(
                "extractbench: --collect-only: nothing was measured and no gate was decided; "
                "no run record was written"
            )
        if self.written is not None:
            terminalreporter.write_sep("=", "extractbench scores")
            written = self.written
            for line in summary_lines(
                written.record, written.terminal_lines, written.record_path,
                written.facts.self_judged, written.facts.own_suites,
            ):  # fmt: skip
                terminalreporter.write_line(line)
