"""The pytest hook layer: options, item parametrization, score recording, gates, reports.

Hooks stay thin and call plain functions (``plugins.aggregate``, ``plugins.gates``,
``plugins.runrecord``, ``plugins.terminal``, ``plugins.selection``). Only the xdist
controller (or the single process without xdist) aggregates and writes files.
"""

from __future__ import annotations

import importlib
import platform
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from _pytest.reports import TestReport

from fixtures.plugin import DATA_DIR_KEY, MODEL_SPEC_KEY
from plugins.aggregate import aggregate
from plugins.gates import GateError, evaluate_gates
from plugins.recorder import ItemRecorder
from plugins.runrecord import SCHEMA_VERSION, new_run_id, write_record
from plugins.selection import stratified_limit
from plugins.settings import Settings, SettingsError, read_settings
from plugins.terminal import score_table
from suites.item import DataError, DataMissing, Item, SuiteData

WORKER_OUTPUT_KEY = "extractbench_suites"


@dataclass
class RunState:
    """Per-run state of this process (one per pytest config)."""

    run_id: str
    started: float
    started_at: str
    settings: Settings
    report_path: Path
    controller: bool
    loaded: dict[str, SuiteData] = field(default_factory=dict)
    suites: dict[str, dict[str, Any]] = field(default_factory=dict)
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    record: dict[str, Any] | None = None
    extra_lines: list[str] = field(default_factory=list)
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
        "--full",
        action="store_true",
        help="ignore the default item caps of [tool.extractbench.limits] and run every item "
        "of every suite (--limit still applies).",
    )
    group.addoption(
        "--suite-option",
        action="append",
        default=[],
        metavar="SUITE.KEY=VALUE",
        help="set a suite option, e.g. tableqa.language=ru; overrides "
        "[tool.extractbench.options.SUITE] in pyproject.toml. Repeatable.",
    )
    group.addoption(
        "--report-json",
        metavar="PATH",
        default=None,
        help="where to write the JSON run record (default reports/<run-id>.json under rootdir).",
    )


def pytest_configure(config: pytest.Config) -> None:
    limit = config.getoption("limit")
    if limit is not None and limit < 1:
        raise pytest.UsageError(f"--limit {limit}: must be at least 1")
    try:
        settings = read_settings(
            config.rootpath / "pyproject.toml",
            config.getoption("gate"),
            config.getoption("suite_option"),
        )
    except (GateError, SettingsError) as exc:
        raise pytest.UsageError(str(exc)) from None
    run_id = new_run_id()
    option = config.getoption("report_json")
    report_path = Path(option) if option else config.rootpath / "reports" / f"{run_id}.json"
    config.stash[STATE_KEY] = RunState(
        run_id=run_id,
        started=time.time(),
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        settings=settings,
        report_path=report_path,
        controller=not hasattr(config, "workerinput"),
    )
    config.addinivalue_line(
        "markers",
        "suite(name, load, breakdown=None): items of this test come from load(data_dir, options); "
        "breakdown names the item attribute(s) results are broken down by",
    )
    state = config.stash[STATE_KEY]
    plugin = Controller(config, state) if state.controller else Worker(config, state)
    config.pluginmanager.register(plugin, "extractbench-run")


# ---------------------------------------------------------------- items


def _load_suite(
    state: RunState,
    name: str,
    load: Callable[[Path, dict[str, Any]], SuiteData],
    data_dir: Path | None,
) -> SuiteData:
    if name not in state.loaded:
        if data_dir is None:
            raise DataMissing(
                "no data folder: pass --data-dir DIR or set EXTRACTBENCH_DATA "
                "(default ../shared/data beside the repository)"
            )
        state.loaded[name] = load(data_dir, dict(state.settings.suite_options.get(name, {})))
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
    raw = marker.kwargs.get("breakdown")
    breakdown = [raw] if isinstance(raw, str) else list(raw or [])
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
    seen: set[str] = set()
    for it in items:
        if it.id in seen or not it.id.startswith(f"{name}/"):
            problem = "is duplicated" if it.id in seen else f"does not start with {name}/"
            raise pytest.Collector.CollectError(f"{name}: item id {it.id!r} {problem}")
        seen.add(it.id)
    limit, limit_source = config.getoption("limit"), "--limit"
    if limit is None and not config.getoption("full"):
        limit, limit_source = state.settings.limits.get(name), "[tool.extractbench.limits]"
    if limit is not None:
        items = stratified_limit(items, limit, breakdown[0] if breakdown else None)
    state.suites[name] = {
        "breakdown": breakdown,
        "items_total": len(data.items),
        "items_selected": len(items),
        "limit": {"value": limit, "source": limit_source} if limit is not None else None,
        "report": marker.kwargs.get("report"),
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
        entry["error"] = (
            str(report.longrepr).strip().splitlines()[-1][:500] if report.longrepr else ""
        )
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
        common = dict(
            nodeid=nodeid, location=("gate", None, nodeid), keywords={}, user_properties=props
        )
        outcome = "passed" if result["passed"] else "failed"
        longrepr = (
            None if result["passed"] else f"gate {result['expression']} failed: {result['reason']}"
        )
        reports.append(
            TestReport(outcome=outcome, longrepr=longrepr, when="call", duration=0.0, **common)
        )
        reports.append(
            TestReport(outcome="passed", longrepr=None, when="teardown", duration=0.0, **common)
        )
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
        "gates": [g.expression for g in state.settings.gates],
        "python": platform.python_version(),
        "pytest": pytest.__version__,
        "platform": platform.platform(),
    }


def build_record(config: pytest.Config, state: RunState, exitstatus: int) -> dict[str, Any]:
    """Aggregate finished items, check gates, and return the run record (a JSON-safe dict)."""
    items = [state.items[key] for key in sorted(state.items)]
    breakdowns = {
        name: info["breakdown"] for name, info in state.suites.items() if info.get("breakdown")
    }
    scored = [it for it in items if it.get("outcome") == "passed"]
    aggregates = aggregate(scored, breakdowns)
    means = {key: agg["mean"] for key, agg in aggregates.items()}
    ran = {it["suite"] for it in scored}
    gates = [r.to_dict() for r in evaluate_gates(state.settings.gates, means, ran)]
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
        state.extra_lines = suite_reports(record, state.report_path)
        _junit_suite_properties(config, record)
        try:
            state.written = write_record(record, state.report_path)
        except OSError as exc:
            state.write_error = f"cannot write run record {state.report_path}: {exc}"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        record = self.state.record
        if record is not None:
            for line in summary_lines(record, self.state):
                terminalreporter.write_line(line)


def suite_reports(record: dict[str, Any], report_path: Path) -> list[str]:
    """Run each suite's report module (``report=`` in its marker) on the record.

    A report module has ``summary_lines(record, suite) -> list[str]`` and
    ``write_artifacts(record, suite, folder, stem) -> list[Path]``; files go next to the
    run record and are listed under ``suites.<name>.artifacts``. A failing report module
    costs its own output only, with one line saying why.
    """
    lines: list[str] = []
    for name, info in sorted(record["suites"].items()):
        module_name = info.get("report")
        if not module_name:
            continue
        try:
            module = importlib.import_module(module_name)
            lines += module.summary_lines(record, name)
            paths = module.write_artifacts(record, name, report_path.parent, report_path.stem)
            info["artifacts"] = [str(p) for p in paths]
            if paths:
                lines.append(f"{name}: wrote {len(paths)} report files next to the run record")
        except Exception as exc:  # a report must never lose the run record
            lines.append(f"{name}: report {module_name} failed: {type(exc).__name__}: {exc}")
    return lines


def _junit_suite_properties(config: pytest.Config, record: dict[str, Any]) -> None:
    """Model identity and aggregate means as ``<testsuite>`` properties of ``--junitxml``."""
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    model = record["model"]
    xml.add_global_property("extractbench.run_id", record["run_id"])
    for key in ("name", "backend", "sha256"):
        xml.add_global_property(f"extractbench.model.{key}", str(model.get(key, "")))
    for key, agg in record["aggregates"].items():
        xml.add_global_property(key, f"{agg['mean']:.6f}")
        xml.add_global_property(f"{key}.ci95", f"[{agg['ci_low']:.6f}, {agg['ci_high']:.6f}]")
        xml.add_global_property(f"{key}.n", str(agg["n"]))


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
    lines += state.extra_lines
    for gate in record["gates"]:
        if gate["passed"] is False:
            lines.append(f"GATE FAILED  {gate['expression']}: {gate['reason']}")
    if state.written:
        lines.append(f"run record: {state.written}")
    if state.write_error:
        lines.append(state.write_error)
    return lines
