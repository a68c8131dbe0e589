"""End-of-run hooks of the aggregating process, and the outputs it writes.

The xdist controller (or the single process without xdist) receives every item's record
inside its test report, and at the end builds the run record, adds gate and regression
verdicts as test cases (so JUnit and pytest-html show them), sets the exit status, and
writes the run record, plots, suite reports and the markdown summary. Workers only hand
their suite facts to the controller.
"""

from __future__ import annotations

import platform
import shutil
import signal
import sys
import tempfile
import threading
import time
import warnings
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import pytest
from _pytest.reports import TestReport

from fixtures.models.redact import redact_json, redact_text
from plugins.outputs.code_version import code_version
from plugins.outputs.endpoint_stats import endpoint_lines, endpoint_stats
from plugins.outputs.html_report import item_details, scores_cell, summary_html
from plugins.outputs.junit import suite_properties
from plugins.outputs.markdown import summary_markdown
from plugins.outputs.plots import metric_plots
from plugins.outputs.record import SCHEMA_VERSION, item_counts, remove_stale, write_record
from plugins.outputs.terminal import score_table
from plugins.run.crashes import (
    FAULT_DIR_KEY,
    crash_message,
    crashed_item_entry,
    enable_fault_log,
    read_fault,
)
from plugins.run.grouping import GroupingLost, ungrouped_items
from plugins.run.state import USAGE_PREFIX, RunState
from plugins.verdict.decide import verdict
from plugins.verdict.evaluation import evaluate, leave_undecided
from suites.datasets.manifest import load_manifest
from suites.datasets.provenance import data_provenance
from suites.datasets.resolve import DataChoice, DataDirError, choose_data_dir, offline_from_env
from suites.files import atomic_write
from suites.registry import SOURCES_HINT, Registry

__all__ = [
    "Controller",
    "Worker",
    "WORKER_OUTPUT_KEY",
    "build_record",
    "verdict_reports",
    "suite_lines_and_artifacts",
]

WORKER_OUTPUT_KEY = "extractbench_suites"


def verdict_reports(
    kind: str, name: str, passed: bool, message: str, props: list[tuple[str, object]]
) -> list[TestReport]:
    """A call and a teardown report for a synthetic test case ``<kind>::<name>``.

    Fed through ``pytest_runtest_logreport`` they appear as test cases in the terminal
    summary, in ``--junitxml`` (classname ``kind``, name ``name``, ``props`` as properties)
    and in pytest-html, and a failing one counts as a failed test.
    """
    nodeid = f"{kind}::{name}"
    common: dict[str, Any] = dict(
        nodeid=nodeid, location=(kind, None, nodeid), keywords={}, user_properties=props
    )
    return [
        TestReport(
            outcome="passed" if passed else "failed",
            longrepr=None if passed else message,
            when="call",
            duration=0.0,
            **common,
        ),
        TestReport(outcome="passed", longrepr=None, when="teardown", duration=0.0, **common),
    ]


def _run_settings(config: pytest.Config, state: RunState) -> dict[str, Any]:
    spec = state.model
    data_dir = state.data_dir
    numprocesses = getattr(config.option, "numprocesses", None)
    return {
        "argv": list(config.invocation_params.args),
        "backend": spec.backend,
        "seed": spec.seed,
        "n_threads": spec.n_threads,
        "workers": numprocesses or 0,
        "dist": getattr(config.option, "dist", "no"),
        "limit": config.getoption("limit"),
        "full": config.getoption("full"),
        **({"shard": str(state.shard)} if state.shard is not None else {}),
        **({"server": state.server.describe()} if state.server is not None else {}),
        "data_dir": str(data_dir) if data_dir else None,
        "gates": [g.expression for g in state.settings.gates],
        "suite_options": state.settings.suite_options,
        "python": platform.python_version(),
        "pytest": pytest.__version__,
        "platform": platform.platform(),
    }


def build_record(config: pytest.Config, state: RunState, exitstatus: int) -> dict[str, Any]:
    """The run record of the items finished so far (a JSON-safe dict), without the
    verdict (``plugins.verdict.decide`` decides from this record)."""
    items = [state.items[key] for key in sorted(state.items)]
    known = [info.get("items_selected") for info in state.suites.values()]
    expected = sum(n or 0 for n in known)
    if state.collected and (not state.suites or None in known):
        # -n: interrupted before every suite's facts arrived; a skipped suite's one
        # "no-data" test is not an item
        expected = state.collected - sum(1 for name in state.skipped if name in state.suites)
    spec = state.model
    replay = state.replay
    judge: dict[str, Any] | None = None
    if replay is not None:  # --rescore: the generations are the recorded model's
        model, judge = replay["model"], replay.get("judge")
    else:
        try:
            model = spec.describe()
            judge = state.judge.describe() if state.judge is not None else None
        except OSError as exc:
            model = {"backend": spec.backend, "path": str(spec.path), "error": str(exc)}
    # -k, -m, --deselect, --lf left out part of a suite: a subset decides nothing
    subset = {
        n: i["items_deselected"] for n, i in state.suites.items() if i.get("items_deselected")
    }
    allow_subset = bool(config.getoption("allow_subset"))
    rescored_complete = replay is None or bool(replay.get("complete", False))
    complete = (
        rescored_complete  # a re-score is as complete as its record
        and (not subset or allow_subset)
        and not state.interrupted
        and not state.stopped
        and not state.crashes
        and not state.usage_errors
        and len(items) >= expected
    )
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "run_id": state.run_id,
        "started_at": state.started_at,
        "duration_s": round(time.time() - state.started, 3),
        "complete": complete,
        "exit_status": int(exitstatus),
        "pytest_exit_status": int(exitstatus),
        "interrupted": state.interrupted,
        "stopped": state.stopped,
        "usage_errors": list(state.usage_errors),
        "crashes": list(state.crashes),
        "other_failures": sorted(state.other_failures),
        "suites_skipped": dict(state.skipped),
        "output_errors": list(state.output_errors),
        "data": state.data,
        "code": code_version(),
        "model": model,
        "settings": _run_settings(config, state),
        "suites": state.suites,
        "counts": item_counts(items, expected),
        "items": items,
    }
    if judge is not None:
        record["judge"] = judge
    if subset:
        record["subset"] = {"items_deselected": subset, "allowed": allow_subset}
    # no credential of a --base-url reaches an output (settings.argv, model, errors); the
    # items' predictions and references stay verbatim (their endpoints are redacted at source)
    record = {k: v if k == "items" else redact_json(v) for k, v in record.items()}
    for item in items:
        if item.get("error") and "://" in str(item["error"]):
            item["error"] = redact_text(str(item["error"]))
    endpoints = endpoint_stats(items)
    if endpoints:
        record["endpoints"] = endpoints
    if replay is not None:
        record["rescore_of"] = {
            "run_id": replay.get("run_id", ""),
            "path": config.getoption("rescore"),
        }
    record.update(
        evaluate(
            items, state.suites, state.settings.gates, state.baseline,
            config.getoption("max_regression"), skipped=state.skipped,
            unloaded={
                name: error.split(": ", 1)[1]
                for error in state.usage_errors
                for name in state.registry.names
                if error.startswith(f"{name}: ")
            },
            allow_incomparable=config.getoption("allow_incomparable_baseline"),
        )
    )  # fmt: skip
    return record


def suite_lines_and_artifacts(
    record: dict[str, Any], registry: Registry, report_path: Path | None
) -> tuple[list[str], list[Path]]:
    """Run each suite's report (found by the suite's name in the registry, never by a
    name read from the record) on the record.

    Each suite's report is found by its name in the registry (``Suite.summary_lines``,
    ``Suite.write_artifacts``; a run record never names code); with ``report_path`` its
    files go next to the run record and are listed under ``suites.<name>.artifacts``.
    A failing report costs only its own output, with one line saying why.
    """
    lines: list[str] = []
    paths: list[Path] = []
    for name, info in sorted(record.get("suites", {}).items()):
        suite = registry.get(name)
        if suite is None or suite.report is None:
            continue
        try:
            lines += suite.summary_lines(record)
            if report_path is not None:
                written = suite.write_artifacts(record, report_path.parent, report_path.stem)
                info["artifacts"] = [str(p) for p in written]
                paths += written
        except Exception as exc:  # a report must never lose the run record
            lines.append(f"{name}: report {suite.report} failed: {type(exc).__name__}: {exc}")
    return lines, paths


def _junit_suite_properties(config: pytest.Config, record: dict[str, Any]) -> None:
    """Model identity and aggregate means as ``<testsuite>`` properties of ``--junitxml``."""
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    for name, value in suite_properties(record):
        xml.add_global_property(name, value)


def summary_lines(record: dict[str, Any], state: RunState) -> list[str]:
    """The terminal summary: model, counts, score table, suite reports, verdicts, files."""
    model = record["model"]
    counts = record["counts"]
    lines = [
        f"model: {model.get('name', '?')} ({model.get('backend')}) sha256 {str(model.get('sha256', ''))[:12]}",
        f"items: {counts['scored']} scored, {counts['failed']} failed, of {counts['expected']} selected"
        + ("" if record["complete"] else "  [INCOMPLETE RUN]"),
        *(
            [
                f"shard {state.shard}: {counts['items']} items of the selected groups fall here; "
                "`extractbench merge` of every shard's record decides the gates"
            ]
            if state.shard is not None
            else []
        ),  # fmt: skip
        f"model calls: {counts.get('calls', 0)}, {counts.get('cached_calls', 0)} answered from the "
        + ("run record (--rescore)" if record.get("rescore_of") else "generation cache"),
    ]
    repack = model.get("weight_repack") or {}
    if repack and not repack.get("repack", True):
        lines.insert(1, f"llama.cpp weight repacking {repack.get('reason')}")
    for name, info in sorted(record["suites"].items()):
        limit = info.get("limit")
        if limit:
            lines.append(
                f"{name}: {info['items_selected']} of {info['items_total']} items ({limit['source']} {limit['value']})"
            )
        for note_key, note in sorted(info.get("notes", {}).items()):
            if note_key.startswith("warning"):
                lines.append(f"{name}: {note}")
    for name, why in sorted(record.get("suites_skipped", {}).items()):
        lines.append(f"{name}: SKIPPED ({why})")
    lines += endpoint_lines(record.get("endpoints", {}))
    lines += score_table(record["aggregates"], record["gates"])
    lines += state.extra_lines
    base = record.get("baseline")
    if base:
        lines.append(f"baseline {base.get('run_id', '')}: {base.get('reason', '')}")
    for c in (base or {}).get("comparisons", []):
        if c["delta"] is not None:
            lines.append(
                f"baseline {c['metric']}: {c['baseline']:.4f} -> {c['current']:.4f}, paired delta {c['delta']:+.4f} "
                f"[{c['ci_low']:+.4f}, {c['ci_high']:+.4f}] over {c['n_shared']} shared items: {c['verdict']}"
                + ("  REGRESSION GATE FAILED" if c["failed"] else "")
            )
        else:
            lines.append(
                f"baseline {c['metric']}: not comparable (no shared items; {c['only_current']} here, {c['only_baseline']} in baseline)"
            )
    for gate in record["gates"]:
        if gate["passed"] is False:
            lines.append(f"GATE FAILED  {gate['expression']}: {gate['reason']}")
        elif gate["passed"] is None:
            lines.append(f"GATE NOT EVALUATED  {gate['expression']}: {gate['reason']}")
    for line in record.get("usage_errors", []):
        lines.append(f"usage error: {line}")
    if state.written:
        lines.append(f"run record: {state.written}")
    lines += [f"NOT WRITTEN: {e}" for e in record.get("output_errors", [])]
    lines.append(f"extractbench verdict: {verdict(record).headline()}")
    return lines


def _item_id(nodeid: str) -> str:
    """``suites/fda/test_fda.py::test_fda[fda/K1/c0/key]@group`` -> ``fda/K1/c0/key``."""
    head = nodeid.rsplit("@", 1)[0] if nodeid.rfind("@") > nodeid.rfind("]") else nodeid
    return head[head.find("[") + 1 : -1] if head.endswith("]") and "[" in head else head


class Controller:
    """Hooks of the process that aggregates: the xdist controller, or the only process."""

    def __init__(self, config: pytest.Config, state: RunState) -> None:
        self.config = config
        self.state = state
        self.session: pytest.Session | None = None
        self._sigterm: Any = None
        if threading.current_thread() is threading.main_thread():
            self._sigterm = signal.signal(signal.SIGTERM, self._on_sigterm)
        # where each process that runs items writes its faulthandler report
        # (plugins/crashes.py); a supervised run (plugins/supervisor.py) gives its journal
        self._own_fault_dir = state.journal is None
        self.fault_dir = state.journal or Path(tempfile.mkdtemp(prefix="extractbench-faults-"))

    def _on_sigterm(self, signum: int, frame: Any) -> None:
        """SIGTERM (timeout, CI cancellation, Kubernetes) ends the run like Ctrl-C: the
        finished items are recorded, the workers stopped, exit 2."""
        self.state.signal = "SIGTERM"
        raise KeyboardInterrupt("SIGTERM")

    def pytest_unconfigure(self) -> None:
        if self._sigterm is not None:
            signal.signal(signal.SIGTERM, self._sigterm)
            self._sigterm = None
        if self._own_fault_dir:
            shutil.rmtree(self.fault_dir, ignore_errors=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist: each worker writes its fault report into the run's fault folder."""
        node.workerinput[FAULT_DIR_KEY] = str(self.fault_dir)

    def _stop(self, reason: str) -> None:
        """Stop the run after the items now running (serial and under xdist)."""
        if self.session is not None and not self.session.shouldstop:
            self.session.shouldstop = reason
        dsession = self.config.pluginmanager.getplugin("dsession")
        if dsession is not None and not dsession.shouldstop:
            dsession.shouldstop = reason

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        """Before any worker starts: which suites the command selects, and whether their
        data is there (missing data is a usage error, one line per suite)."""
        self.session = session
        config, state = self.config, self.state
        if not getattr(config.option, "numprocesses", None):  # this process runs the items
            enable_fault_log(self.fault_dir, "main")
        selected = state.registry.selected(config.args, config.invocation_params.dir)
        replay = state.replay
        if replay is not None:
            held = sorted({str(it.get("suite")) for it in replay.get("items", [])})
            chosen = [spec for spec in selected if spec.name in held]
            if selected and not chosen:
                raise pytest.UsageError(
                    f"--rescore {config.getoption('rescore')}: the record holds no item of the "
                    f"selected suites ({', '.join(s.name for s in selected)}); it holds: "
                    f"{', '.join(held) or 'no items'}"
                )
            selected = chosen
        state.selected = [spec.name for spec in selected]
        manifest = load_manifest()
        fetch_error = ""
        choice = state.data_choice
        if choice is None:  # nothing explicit: the user cache, ../shared/data, or fetch
            try:
                local = [
                    spec.name for spec in selected
                    if spec.reads_local_data(state.options.get(spec.name))
                ]  # fmt: skip
                capture = config.pluginmanager.getplugin("capturemanager")
                with capture.global_and_fixture_disabled() if capture else nullcontext():
                    choice = choose_data_dir(  # progress goes to the real terminal, live
                        manifest, local, config.rootpath,
                        offline=config.getoption("offline") or offline_from_env(),
                        mirror=config.getoption("mirror"), progress=sys.stderr.isatty(),
                        say=lambda line: print(line, file=sys.stderr, flush=True),
                    )  # fmt: skip
            except DataDirError as exc:  # each suite is then named as missing, below
                fetch_error = str(exc)
                choice = DataChoice(None, "fetch failed")
            state.data_choice = choice
        data_dir = state.data_dir
        where = (
            str(data_dir)
            if data_dir
            else "no data folder (none given, none cached, ../shared/data absent)"
        )
        lines = []
        for spec in selected:
            missing = spec.missing_data(data_dir, state.options.get(spec.name))
            if not missing:
                continue
            line = (
                f"{spec.name}: data missing in {where}: {', '.join(missing)} ({spec.data_source})"
            )
            if config.getoption("skip_missing_data"):
                state.skipped[spec.name] = f"data missing: {', '.join(missing)}"
            else:
                lines.append(line)
        if lines:
            fetchable = [
                s for s in state.selected if s in manifest.suites and s not in state.skipped
            ]
            offline = config.getoption("offline") or offline_from_env()
            how = (
                f"`extractbench data fetch {' '.join(fetchable)}`"
                + (" (or run without --offline / EXTRACTBENCH_OFFLINE)" if offline else "")
                + ", or "
                if fetchable
                else ""
            )
            raise pytest.UsageError(
                (f"{fetch_error}\n" if fetch_error else "")
                + "\n".join(lines)
                + f"\nto get the data: {how}{SOURCES_HINT}; or --skip-missing-data to skip such suites"
            )
        if fetch_error:  # skipped with --skip-missing-data: still say why the data is absent
            print(f"extractbench: {fetch_error}", file=sys.stderr, flush=True)
        state.data = data_provenance(manifest, choice, data_dir, state.selected, state.skipped)

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
    def pytest_handlecrashitem(self, crashitem: str, report: TestReport, sched: Any) -> None:
        """A process died while running ``crashitem`` (an xdist worker; without xdist, the
        supervised pytest process, :mod:`plugins.run.supervisor`): record it as failed, naming
        the process, the signal, the top frame and the library from its fault report, in
        the run record, the report (JUnit, terminal) and a terminal line now. A re-run of
        the item, if any, does not hide the crash."""
        node = getattr(report, "node", None)
        worker = getattr(report, "extractbench_worker", None) or getattr(
            getattr(node, "gateway", None), "id", "?"
        )
        fault = getattr(report, "extractbench_fault", None)
        if fault is None:
            fault = read_fault(self.fault_dir, worker)
        message = crash_message(worker, crashitem, fault)
        item_id = _item_id(crashitem)
        self.state.crashes.append(
            {"item": item_id, "nodeid": crashitem, "worker": worker, "message": message,
             "signal": fault.get("signal"), "frame": fault.get("frame"),
             "library": fault.get("library"), "fault_report": fault.get("report", "")}
        )  # fmt: skip
        self.state.crashed_ids.add(item_id)
        self.state.items[item_id] = crashed_item_entry(item_id, crashitem, message)
        report.longrepr = message + (f"\n\n{fault['report']}" if fault.get("report") else "")
        report.when = "call"  # xdist says "???": JUnit would call it a setup error
        reporter = self.config.pluginmanager.getplugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"extractbench: {message}", red=True, bold=True)

    def pytest_runtest_logreport(self, report: TestReport) -> None:
        for name, info in (getattr(report, "extractbench_suite", None) or {}).items():
            if info is not None:
                self.state.suites.setdefault(name, info)
        entry = getattr(report, "extractbench_item", None)
        if entry is None:
            synthetic = report.nodeid.startswith(("gate::", "regression::"))
            crashed = _item_id(report.nodeid) in self.state.crashed_ids
            if report.failed and not synthetic and not crashed:
                self.state.other_failures.add(report.nodeid)  # a plain test beside the suites
            return
        if entry["id"] in self.state.crashed_ids:
            return
        if entry["id"] not in self.state.items or report.failed:
            self.state.items[entry["id"]] = entry
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
        if self.state.signal:
            self.state.interrupted = self.state.signal
        elif type(value) is KeyboardInterrupt or "keyboard-interrupt" in str(value):
            self.state.interrupted = "SIGINT"  # Ctrl-C here, or in a worker (xdist says so)
        # else: pytest's or xdist's Interrupted for a stop we asked for or collection errors

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        """``--dist loadgroup`` with recovery from a crashed worker that cannot hang."""
        if getattr(config.option, "dist", "no") != "loadgroup":
            return None
        from plugins.run.scheduling import CrashSafeLoadGroupScheduling

        return CrashSafeLoadGroupScheduling(config, log)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.state.collected = len(ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {}) or {}
        for name, info in output.get(WORKER_OUTPUT_KEY, {}).items():
            self.state.suites.setdefault(name, info)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config, state = self.config, self.state
        if config.option.collectonly:
            return
        if not (state.selected or state.items or state.suites or state.usage_errors):
            return  # not a benchmark run (e.g. the harness's own tests)
        for name in state.selected:  # skipped, or no worker told its facts (interrupted)
            if name in state.suites:
                continue
            note = (
                {"skipped": state.skipped[name]}
                if name in state.skipped
                else {"warning_no_facts": "the run ended before this suite's facts arrived"}
            )
            state.suites[name] = {
                "breakdown": [], "items_total": None, "items_selected": None, "limit": None,
                "notes": note,
            }  # fmt: skip
        record = build_record(config, state, session.exitstatus)
        if state.interrupted:
            leave_undecided(record["gates"], "run interrupted")
        elif state.crashes:
            leave_undecided(record["gates"], "a process crashed while running an item")
        elif record.get("subset") and not record["subset"]["allowed"]:
            leave_undecided(
                record["gates"], "a subset of the selected items ran (-k, -m, --deselect, --lf); "
                "--allow-subset decides on it",
            )  # fmt: skip
        elif not record["complete"]:  # an incomplete record never shows a passed gate
            leave_undecided(record["gates"], "the run is incomplete", decided_only=True)
        elif state.shard is not None:
            leave_undecided(record["gates"], f"shard {state.shard}; extractbench merge decides")
        for gate in record["gates"]:
            if gate["passed"] is not None:
                props = [
                    ("expression", gate["expression"]),
                    ("value", "" if gate["value"] is None else gate["value"]),
                ]
                for report in verdict_reports(
                    "gate",
                    gate["metric"],
                    gate["passed"],
                    f"gate {gate['expression']} failed: {gate['reason']}",
                    props,
                ):
                    config.hook.pytest_runtest_logreport(report=report)
        base = record.get("baseline")
        if base and base.get("failed"):
            for report in verdict_reports(
                "regression", "baseline", False, f"baseline {base['reason']}",
                [("shared_items", base["shared_items"])],
            ):  # fmt: skip
                config.hook.pytest_runtest_logreport(report=report)
        for c in (base or {}).get("comparisons", []):
            if c["delta"] is None:
                continue
            message = (
                f"regression {c['metric']}: paired delta {c['delta']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}] "
                f"exceeds --max-regression {base['max_regression']}"
            )
            props = [
                ("delta", c["delta"]),
                ("ci_low", c["ci_low"]),
                ("ci_high", c["ci_high"]),
                ("n_shared", c["n_shared"]),
            ]
            for report in verdict_reports(
                "regression", c["metric"], not c["failed"], message, props
            ):
                config.hook.pytest_runtest_logreport(report=report)
        state.record = record
        self._write_outputs(record)
        session.exitstatus = verdict(record).status
        _junit_suite_properties(config, record)

    def _decide(self, record: dict[str, Any]) -> None:
        record["output_errors"] = list(self.state.output_errors)
        decision = verdict(record)
        record["exit_status"] = decision.status
        record["verdict"] = {"word": decision.word, "reasons": decision.reasons}

    def _write_outputs(self, record: dict[str, Any]) -> None:
        """Plots, suite reports, the markdown summary, then the run record (last, so it
        holds the final verdict). Any of them that cannot be written is an output error:
        exit 6, one line, and never an earlier run's record left at the path."""
        state = self.state
        folder, stem = state.report_path.parent, state.report_path.stem
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # nothing can be written there; the record says so below
            state.extra_lines, suite_files = suite_lines_and_artifacts(record, state.registry, None)
            state.output_errors.append(
                f"run record {state.report_path}: cannot create its folder ({exc.strerror or exc}); "
                + remove_stale(state.report_path)
            )
        else:
            state.extra_lines, suite_files = suite_lines_and_artifacts(
                record, state.registry, state.report_path
            )
        plots: list[Path] = []
        if not state.output_errors:
            try:
                plots = metric_plots(record, folder, stem)
            except Exception as exc:  # a plot must never lose the run record
                state.extra_lines.append(f"plots failed: {type(exc).__name__}: {exc}")
        state.artifacts = plots + suite_files
        record["artifacts"] = [str(p) for p in state.artifacts]
        md_path = self.config.getoption("summary_md")
        if md_path:
            self._decide(record)
            self._write_markdown(record, Path(md_path))
        self._decide(record)
        if any(e.startswith("run record ") for e in state.output_errors):
            return
        try:
            state.written = write_record(record, state.report_path)
        except OSError as exc:
            state.output_errors.append(
                f"run record {state.report_path}: {exc.strerror or exc}; "
                + remove_stale(state.report_path)
            )
            self._decide(record)
            if md_path:  # the summary must not say more than the record could
                self._write_markdown(record, Path(md_path))

    def _write_markdown(self, record: dict[str, Any], path: Path) -> None:
        try:
            atomic_write(
                path,
                summary_markdown(
                    record, self.state.artifacts, path.parent.resolve(), self.state.extra_lines
                ),
            )
        except OSError as exc:
            message = f"--summary-md {path}: {exc.strerror or exc}"
            if message not in self.state.output_errors:
                self.state.output_errors.append(message)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        record = self.state.record
        if self.config.option.collectonly and (self.state.selected or self.state.suites):
            terminalreporter.write_line(
                "extractbench: --collect-only: nothing was measured and no gate was decided; "
                "no run record was written"
            )
        if record is not None:
            terminalreporter.write_sep("=", "extractbench scores")
            for line in summary_lines(record, self.state):
                terminalreporter.write_line(line)

    # ------------------------------------------------------------ pytest-html

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: Any
    ) -> None:
        record = self.state.record
        if record is not None:
            prefix.append(summary_html(record, self.state.artifacts, self.state.extra_lines))

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells.insert(2, '<th class="sortable" data-column-type="scores">Scores</th>')

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: TestReport, cells: list[str]) -> None:
        entry = getattr(report, "extractbench_item", None)
        cells.insert(2, scores_cell(entry) if entry else '<td class="col-scores"></td>')

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_html(self, report: TestReport, data: list[str]) -> None:
        entry = getattr(report, "extractbench_item", None)
        if entry:
            data.insert(0, item_details(entry))


class Worker:
    """Hooks of an xdist worker: hand suite facts to the controller."""

    def __init__(self, config: pytest.Config, state: RunState) -> None:
        self.config = config
        self.state = state

    def pytest_sessionstart(self) -> None:
        """Write this worker's fault report where the controller reads it after a crash."""
        folder = self.config.workerinput.get(FAULT_DIR_KEY)  # type: ignore[attr-defined]
        if folder:
            enable_fault_log(Path(folder), self.config.workerinput["workerid"])  # type: ignore[attr-defined]

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
        self.config.workeroutput[WORKER_OUTPUT_KEY] = self.state.suites  # type: ignore[attr-defined]
