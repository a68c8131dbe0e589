"""Without xdist (``-n 0``), a run that survives the death of its own process.

Under xdist a worker that dies from a signal is replaced and the controller records the
crash (:mod:`plugins.run.crashes`). Without workers the pytest process running the items is
the one that dies, and a segfault leaves no record, no JUnit file and a shell status of
139. So when the model runs native code in process (``--crash-guard auto``: llama-cpp and
hf), the pytest process the user started becomes a supervisor: it runs the same command
in a child process and waits. The child keeps a journal (the item it is running, the
test reports of the items it finished, its faulthandler report). If the child dies from a
signal, the supervisor notes the crash (item, signal, top frame, library) in the journal
and runs the command again: the new child replays the finished items' reports instead of
running them, reports the crashed item as failed, and runs the rest, as a replacement
xdist worker would. The last child writes the record and JUnit file and decides the exit
status (7, CRASHED); the supervisor exits with it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any, cast

import pytest

from extractbench.plugins.run.crashes import (
    CRASH_FAULT,
    CRASH_WORKER,
    crash_message,
    read_fault,
)
from extractbench.suites import safe_json

__all__ = [
    "JOURNAL_ENV",
    "CRASH_GUARD_MODES",
    "should_supervise",
    "supervise",
    "take_journal",
    "Journal",
]

JOURNAL_ENV = "EXTRACTBENCH_CRASH_JOURNAL"
CRASH_GUARD_MODES = ("auto", "on", "off")
CRASHED_STATUS = 7  # plugins.verdict.CRASHED (not imported: the verdict module is larger)
# options whose run collects no items or needs the terminal's stdin: never supervised
_NOT_A_RUN = (
    "help", "version", "collectonly", "showfixtures", "show_fixtures_per_test", "markers",
    "setupplan", "setuponly", "usepdb", "trace",
)  # fmt: skip

_CURRENT, _REPORTS, _CRASHES = "current", "reports.jsonl", "crashes.jsonl"


def should_supervise(config: pytest.Config) -> bool:
    """True when this pytest process should run its command in a supervised child.

    Only the process a user started (not a child, not an xdist worker), without xdist
    workers (``-n 0`` or no ``-n``: xdist replaces dead workers itself), started from a
    command line (``pytest.main`` with plugin objects cannot be run again), for a run that
    runs items; ``--crash-guard on`` always, ``auto`` when the backend runs native code in
    process (llama-cpp, hf; not ``--serve``, ``--rescore``, openai or fake), ``off`` never.
    """
    mode = config.getoption("crash_guard", "off")
    if mode == "off" or os.environ.get(JOURNAL_ENV) or hasattr(config, "workerinput"):
        return False
    if getattr(config.option, "numprocesses", None) not in (None, 0):
        return False
    if config.invocation_params.plugins:
        return False
    if any(getattr(config.option, name, False) for name in _NOT_A_RUN):
        return False
    if mode == "on":
        return True
    backend = cast(str, config.getoption("backend"))  # it has a default
    return (
        _in_process(backend)
        and not config.getoption("serve")
        and not config.getoption("rescore")
    )


def _in_process(backend: str) -> bool:
    """Whether ``backend`` runs the model's native code in the pytest process."""
    from extractbench.fixtures.models.registry import backend_kind
    from extractbench.suites.model_files import ModelFileError

    try:
        return backend_kind(backend).in_process
    except ModelFileError:
        return False  # configure reports the unknown backend


def take_journal() -> Path | None:
    """In a supervised child: the journal folder, taken out of the environment so that
    pytest runs this child starts (a test's subprocess) are not journalled into it."""
    value = os.environ.pop(JOURNAL_ENV, None)
    return Path(value) if value else None


def _run_child(args: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Run the child in its own process group (a Ctrl-C reaches it once, through us);
    forward SIGINT and SIGTERM; its exit status, negative for a signal."""
    child = subprocess.Popen(args, cwd=cwd, env=env, process_group=0)

    def forward(signum: int, frame: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            with contextlib.suppress(InterruptedError):
                return child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def supervise(config: pytest.Config) -> int:
    """Run the command in supervised children until one ends without a signal; return the
    exit status for this process (the last child's; 7 when a child died outside an item).
    Each item a child dies on is run once: it is reported failed, the rest go on."""
    journal = Path(tempfile.mkdtemp(prefix="extractbench-journal-"))
    args = [sys.executable, "-m", "pytest", *config.invocation_params.args]
    env = {**os.environ, JOURNAL_ENV: str(journal)}
    crashed: set[str] = set()
    try:
        while True:
            status = _run_child(args, config.invocation_params.dir, env)
            if status >= 0:
                return status
            fault = read_fault(journal, "main", -status)
            current = journal / _CURRENT
            nodeid = current.read_text().strip() if current.is_file() else ""
            if not nodeid or nodeid in crashed:
                where = f" (top frame {fault['frame']})" if fault.get("frame") else ""
                print(
                    f"extractbench: the pytest process died from {fault['signal']} outside any "
                    f"item{where}; no run record was written (exit {CRASHED_STATUS})",
                    file=sys.stderr, flush=True,
                )  # fmt: skip
                return CRASHED_STATUS
            crashed.add(nodeid)
            message = crash_message("main", nodeid, fault)
            with (journal / _CRASHES).open("a", encoding="utf-8") as out:
                out.write(json.dumps({"nodeid": nodeid, "message": message, "fault": fault}) + "\n")
            current.unlink()
            print(
                f"extractbench: {message}; the remaining items go on in a new process",
                file=sys.stderr, flush=True,
            )  # fmt: skip
    finally:
        shutil.rmtree(journal, ignore_errors=True)


class Journal:
    """The supervised child's journal: what it runs, what it finished, what crashed before.

    Registered by the plugin in a supervised child (:func:`take_journal`).
    """

    def __init__(self, config: pytest.Config, folder: Path) -> None:
        self.config = config
        self.folder = folder
        self.finished: dict[str, list[dict[str, Any]]] = defaultdict(list)
        path = folder / _REPORTS
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                with contextlib.suppress(ValueError):  # a line cut short by the crash
                    data = safe_json.loads(line)
                    self.finished[data["nodeid"]].append(data)
        path = folder / _CRASHES
        self.crashes = {}
        if path.is_file():
            self.crashes = {
                c["nodeid"]: c for c in map(safe_json.loads, path.read_text().splitlines())
            }
        self._log = (folder / _REPORTS).open("a", encoding="utf-8")
        self._replaying = False

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> bool | None:
        """An item an earlier child finished or died on is replayed, not run."""
        crash = self.crashes.get(item.nodeid)
        finished = self.finished.get(item.nodeid)
        if crash is None and not finished:
            return None
        ihook = item.ihook
        ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        self._replaying = True
        try:
            if crash is not None:
                report = pytest.TestReport(
                    item.nodeid, item.location, {}, "failed", crash["message"], "call"
                )
                CRASH_WORKER.put(report, "main")
                CRASH_FAULT.put(report, crash["fault"])
                self.config.hook.pytest_handlecrashitem(
                    crashitem=item.nodeid, report=report, sched=None
                )
                ihook.pytest_runtest_logreport(report=report)
            else:
                for data in finished or []:
                    report = self.config.hook.pytest_report_from_serializable(
                        config=self.config, data=data
                    )
                    ihook.pytest_runtest_logreport(report=report)
        finally:
            self._replaying = False
        ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        if not self._replaying:
            (self.folder / _CURRENT).write_text(nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if self._replaying:
            return
        data = self.config.hook.pytest_report_to_serializable(config=self.config, report=report)
        if data is not None:
            self._log.write(json.dumps(data, default=str) + "\n")
            self._log.flush()

    def pytest_runtest_logfinish(self, nodeid: str) -> None:
        if not self._replaying:
            (self.folder / _CURRENT).write_text("")

    def pytest_unconfigure(self) -> None:
        self._log.close()
