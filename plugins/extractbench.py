"""The pytest hook layer: options, item parametrization, score recording, gates, reports.

Hooks stay thin and call plain functions (``plugins.aggregate``, ``plugins.gates``,
``plugins.runrecord``, ``plugins.terminal``, ``plugins.selection``). Only the xdist
controller (or the single process without xdist) aggregates and writes files.
"""

from __future__ import annotations

import platform
import time
import tomllib
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from _pytest.reports import TestReport

from fixtures.plugin import DATA_DIR_KEY, MODEL_SPEC_KEY
from plugins.aggregate import aggregate
from plugins.gates import Gate, GateError, evaluate_gates, gates_from_config, parse_gate
from plugins.recorder import ItemRecorder
from plugins.runrecord import SCHEMA_VERSION, new_run_id, write_record
from plugins.selection import stratified_limit
from plugins.terminal import score_table
from suites.item import DataError, DataMissing, Item, SuiteData

WORKER_OUTPUT_KEY = "extractbench_suites"


@dataclass
class RunState:
    """Per-run state of this process (one per pytest config)."""

    run_id: str
    started: float
    started_at: str
    gates: list[Gate]
    report_path: Path
    controller: bool
    loaded: dict[str, SuiteData] = field(default_factory=dict)
    suites: dict[str, dict[str, Any]] = field(default_factory=dict)
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    record: dict[str, Any] | None = None
    written: Path | None = None
    write_error: str | None = None


STATE_KEY = pytest.StashKey[RunState]()
RECORDER_KEY = pytest.StashKey[ItemRecorder]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("extractbench", "extractbench: scores, gates and reports")
    group.addoption(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="run a deterministic subset of N items per suite, stratified over the suite's "
        "breakdown attribute (FDA: key). Same subset on every machine and worker.",
    )
    group.addoption(
        "--gate",
        action="append",
        default=[],
        metavar="EXPR",
        help="release gate 'suite/metric>=NUMBER' (also >, <=, <) on the mean; repeatable. "
        "Added to [tool.extractbench.gates] in pyproject.toml. A failing gate exits 1.",
    )
    group.addoption(
        "--report-json",
        metavar="PATH",
        default=None,
        help="where to write the JSON run record (default reports/<run-id>.json under rootdir).",
    )


def _config_gates(config: pytest.Config) -> list[Gate]:
    path = config.rootpath / "pyproject.toml"
    if not path.is_file():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise pytest.UsageError(f"{path}: cannot read gates ({exc})") from None
    table = data.get("tool", {}).get("extractbench", {}).get("gates", {})
    return gates_from_config(table, source=str(path.name))


def pytest_configure(config: pytest.Config) -> None:
    limit = config.getoption("limit")
    if limit is not None and limit < 1:
        raise pytest.UsageError(f"--limit {limit}: must be at least 1")
    try:
        cli = [parse_gate(text, "--gate") for text in config.getoption("gate")]
        gates = _config_gates(config) + cli
    except GateError as exc:
        raise pytest.UsageError(str(exc)) from None
    run_id = new_run_id()
    option = config.getoption("report_json")
    report_path = Path(option) if option else config.rootpath / "reports" / f"{run_id}.json"
    config.stash[STATE_KEY] = RunState(
        run_id=run_id,
        started=time.time(),
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        gates=gates,
        report_path=report_path,
        controller=not hasattr(config, "workerinput"),
    )
    config.addinivalue_line(
        "markers",
        "suite(name, load, breakdown=None): items of this test come from load(data_dir)",
    )
    state = config.stash[STATE_KEY]
    plugin = Controller(config, state) if state.controller else Worker(config, state)
    config.pluginmanager.register(plugin, "extractbench-run")


# ---------------------------------------------------------------- items


def _load_suite(
    state: RunState, name: str, load: Callable[[Path], SuiteData], data_dir: Path | None
) -> SuiteData:
    if name not in state.loaded:
        if data_dir is None:
            raise DataMissing(
                "no data folder: pass --data-dir DIR or set EXTRACTBENCH_DATA "
                "(default ../shared/data beside the repository)"
            )
        state.loaded[name] = load(data_dir)
    return state.loaded[name]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "bench_item" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("suite")
    if marker is None or not marker.args or "load" not in marker.kwargs:
        raise pytest.Collector.CollectError(
            f"{metafunc.definition.nodeid}: takes bench_item but has no "
            "@pytest.mark.suite(NAME, load=FUNCTION) marker"
        )
    name = marker.args[0]
    breakdown = marker.kwargs.get("breakdown")
    config = metafunc.config
    state = config.stash[STATE_KEY]
    try:
        data = _load_suite(state, name, marker.kwargs["load"], config.stash[DATA_DIR_KEY])
    except DataMissing as exc:
        reason = f"{name}: data missing: {exc}"
        metafunc.parametrize(
            "bench_item", [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="no-data")]
        )
        return
    except DataError as exc:
        raise pytest.Collector.CollectError(f"{name}: {exc}") from None
    items: list[Item] = data.items
    limit = config.getoption("limit")
    if limit is not None:
        items = stratified_limit(items, limit, breakdown)
    state.suites[name] = {
        "breakdown": breakdown,
        "items_total": len(data.items),
        "items_selected": len(items),
        "notes": data.notes,
    }
    metafunc.parametrize(
        "bench_item",
        [pytest.param(it, id=it.id, marks=pytest.mark.xdist_group(it.group)) for it in items],
    )


@pytest.fixture
def score(request: pytest.FixtureRequest) -> ItemRecorder:
    """Record named metric values for the current item: ``score("accuracy", 1.0)``.

    Also ``score.generation(gen)`` records the model output. Values travel to the xdist
    controller inside the test report and are aggregated there only.
    """
    callspec = getattr(request.node, "callspec", None)
    bench_item = callspec.params.get("bench_item") if callspec else None
    if not isinstance(bench_item, Item):
        pytest.fail("the score fixture needs a test that takes bench_item", pytrace=False)
    recorder = ItemRecorder(bench_item, request.node.user_properties)
    request.node.stash[RECORDER_KEY] = recorder
    return recorder


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, TestReport, TestReport]:
    report = yield
    callspec = getattr(item, "callspec", None)
    bench_item = callspec.params.get("bench_item") if callspec else None
    if not isinstance(bench_item, Item):
        return report
    recorder = item.stash.get(RECORDER_KEY, None)
    if report.when == "call" and recorder is not None:
        if report.passed and not recorder.scores:
            report.outcome = "failed"
            report.longrepr = f"{bench_item.id}: the test recorded no score"
        entry = recorder.to_dict()
    elif report.failed:
        entry = ItemRecorder(bench_item, []).to_dict()
    else:
        return report
    entry["outcome"] = report.outcome
    if report.failed:
        entry["error"] = str(report.longrepr).strip().splitlines()[-1][:500] if report.longrepr else ""
    report.extractbench_item = entry  # type: ignore[attr-defined]
    return report


# ---------------------------------------------------------------- end of run


def _gate_reports(results: list[dict[str, Any]]) -> list[TestReport]:
    reports = []
    for result in results:
        if result["passed"] is None:
            continue
        nodeid = f"gate::{result['metric']}"
        props = [
            ("expression", result["expression"]),
            ("value", "" if result["value"] is None else result["value"]),
            ("threshold", result["threshold"]),
        ]
        common = dict(nodeid=nodeid, location=("gate", None, nodeid), keywords={}, user_properties=props)
        outcome = "passed" if result["passed"] else "failed"
        longrepr = None if result["passed"] else f"gate {result['expression']} failed: {result['reason']}"
        reports.append(TestReport(outcome=outcome, longrepr=longrepr, when="call", duration=0.0, **common))
        reports.append(TestReport(outcome="passed", longrepr=None, when="teardown", duration=0.0, **common))
    return reports


def _settings(config: pytest.Config, state: RunState) -> dict[str, Any]:
    spec = config.stash[MODEL_SPEC_KEY]
    data_dir = config.stash[DATA_DIR_KEY]
    numprocesses = getattr(config.option, "numprocesses", None)
    return {
        "argv": list(config.invocation_params.args),
        "backend": spec.backend,
        "seed": spec.seed,
        "n_threads": spec.n_threads,
        "workers": numprocesses or 0,
        "dist": getattr(config.option, "dist", "no"),
        "limit": config.getoption("limit"),
        "data_dir": str(data_dir) if data_dir else None,
        "gates": [g.expression for g in state.gates],
        "python": platform.python_version(),
        "pytest": pytest.__version__,
        "platform": platform.platform(),
    }


def build_record(config: pytest.Config, state: RunState, exitstatus: int) -> dict[str, Any]:
    """Aggregate finished items, check gates, and return the run record (a JSON-safe dict)."""
    items = [state.items[key] for key in sorted(state.items)]
    breakdowns = {name: info["breakdown"] for name, info in state.suites.items() if info.get("breakdown")}
    scored = [it for it in items if it.get("outcome") == "passed"]
    aggregates = aggregate(scored, breakdowns)
    means = {key: agg["mean"] for key, agg in aggregates.items()}
    ran = {it["suite"] for it in scored}
    gates = [r.to_dict() for r in evaluate_gates(state.gates, means, ran)]
    expected = sum(info.get("items_selected", 0) for info in state.suites.values())
    interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
    spec = config.stash[MODEL_SPEC_KEY]
    try:
        model = spec.describe()
    except OSError as exc:
        model = {"backend": spec.backend, "path": str(spec.path), "error": str(exc)}
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": state.run_id,
        "started_at": state.started_at,
        "duration_s": round(time.time() - state.started, 3),
        "complete": not interrupted and len(items) >= expected,
        "exit_status": int(exitstatus),
        "model": model,
        "settings": _settings(config, state),
        "suites": state.suites,
        "counts": {
            "items": len(items),
            "expected": expected,
            "scored": len(scored),
            "failed": sum(1 for it in items if it.get("outcome") == "failed"),
        },
        "items": items,
        "aggregates": aggregates,
        "gates": gates,
    }


class Controller:
    """Hooks of the process that aggregates: the xdist controller, or the only process."""

    def __init__(self, config: pytest.Config, state: RunState) -> None:
        self.config = config
        self.state = state

    def pytest_runtest_logreport(self, report: TestReport) -> None:
        entry = getattr(report, "extractbench_item", None)
        if entry is not None and (entry["id"] not in self.state.items or report.failed):
            self.state.items[entry["id"]] = entry

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
        if not state.items and not state.suites and not config.getoption("gate"):
            return  # not a benchmark run (e.g. the harness's own tests)
        record = build_record(config, state, session.exitstatus)
        for report in _gate_reports(record["gates"]):
            config.hook.pytest_runtest_logreport(report=report)
        if any(g["passed"] is False for g in record["gates"]) and session.exitstatus in (
            pytest.ExitCode.OK,
            pytest.ExitCode.NO_TESTS_COLLECTED,
        ):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        record["exit_status"] = int(session.exitstatus)
        state.record = record
        try:
            state.written = write_record(record, state.report_path)
        except OSError as exc:
            state.write_error = f"cannot write run record {state.report_path}: {exc}"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        record = self.state.record
        if record is not None:
            for line in summary_lines(record, self.state):
                terminalreporter.write_line(line)


class Worker:
    """Hooks of an xdist worker: hand suite facts to the controller."""

    def __init__(self, config: pytest.Config, state: RunState) -> None:
        self.config = config
        self.state = state

    def pytest_sessionfinish(self) -> None:
        self.config.workeroutput[WORKER_OUTPUT_KEY] = self.state.suites  # type: ignore[attr-defined]


def summary_lines(record: dict[str, Any], state: RunState) -> list[str]:
    """The terminal summary: model, counts, score table, failed gates, record path."""
    model = record["model"]
    counts = record["counts"]
    lines = [
        "=" * 30 + " extractbench scores " + "=" * 30,
        f"model: {model.get('name', '?')} ({model.get('backend')}) sha256 {str(model.get('sha256', ''))[:12]}",
        f"items: {counts['scored']} scored, {counts['failed']} failed, of {counts['expected']} selected"
        + ("" if record["complete"] else "  [INCOMPLETE RUN]"),
    ]
    for name, info in sorted(record["suites"].items()):
        for note_key, note in sorted(info.get("notes", {}).items()):
            if note_key.startswith("warning"):
                lines.append(f"{name}: {note}")
    lines += score_table(record["aggregates"], record["gates"])
    for gate in record["gates"]:
        if gate["passed"] is False:
            lines.append(f"GATE FAILED  {gate['expression']}: {gate['reason']}")
    if state.written:
        lines.append(f"run record: {state.written}")
    if state.write_error:
        lines.append(state.write_error)
    return lines
