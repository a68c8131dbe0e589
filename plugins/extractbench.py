"""The pytest hook layer: options, item parametrization, score recording, gates, reports.

Hooks stay thin and call plain functions (``plugins.verdict.aggregate``, ``plugins.verdict.gates``,
``plugins.outputs.record``, ``plugins.outputs.terminal``, ``plugins.run.selection``). Only the xdist
controller (or the single process without xdist) aggregates and writes files.
"""

from __future__ import annotations

import math
import time
from collections.abc import Generator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from _pytest.reports import TestReport

from fixtures.models.base import RunStopper
from fixtures.models.wrappers import recording_calls
from fixtures.nodes import bench_item_of
from plugins.outputs.record import RecordError, new_run_id, read_record
from plugins.run.controller import Controller, Worker
from plugins.run.options import add_options
from plugins.run.recorder import ItemRecorder
from plugins.run.selection import stratified_limit
from plugins.run.settings import SettingsError, check_settings, read_settings
from plugins.run.shard import parse_shard
from plugins.run.state import STATE_KEY, USAGE_PREFIX, RunState
from plugins.run.supervisor import Journal, should_supervise, supervise, take_journal
from plugins.verdict.gates import GateError
from suites.item import DataError, DataMissing, Item, SuiteData
from suites.protocol import Suite
from suites.registry import SOURCES_HINT, Registry, RegistryError, entry_point_suites

# The model and data fixtures are the second half of the plugin (its setup_models is
# called from pytest_configure below, so one run state holds everything).
pytest_plugins = ["fixtures.plugin"]

RECORDER_KEY = pytest.StashKey[ItemRecorder]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = add_options(parser)
    try:
        suites = entry_point_suites()
    except RegistryError:
        return  # pytest_configure reports it as a usage error
    for suite in suites:
        if suite.add_options is not None:
            suite.add_options(group)  # a suite's own options (MINEA: --needles)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from plugins import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """``-n 0`` with a model in process: run the command in a supervised child, so a
    segfault is a recorded crash, not a lost run (``--crash-guard``, plugins/supervisor.py)."""
    if should_supervise(config):
        return supervise(config)
    return None


def _registry(config: pytest.Config) -> Registry:
    extra = [suite for suites in config.hook.pytest_extractbench_suites() for suite in suites]
    try:
        return Registry.installed(extra)
    except RegistryError as exc:
        raise pytest.UsageError(str(exc)) from None


def pytest_configure(config: pytest.Config) -> None:
    limit = config.getoption("limit")
    if limit is not None and limit < 1:
        raise pytest.UsageError(f"--limit {limit}: must be at least 1")
    registry = _registry(config)
    suite_options = list(config.getoption("suite_option"))
    for suite in registry.suites.values():
        if suite.cli_options is not None:  # a suite's own options (MINEA: --needles)
            given = suite.cli_options(config.getoption)
            suite_options += [f"{suite.name}.{key}={value}" for key, value in given.items()]
    try:
        settings = read_settings(
            config.rootpath / "pyproject.toml", config.getoption("gate"), suite_options
        )
    except (GateError, SettingsError) as exc:
        raise pytest.UsageError(str(exc)) from None
    problems = check_settings(settings, registry)
    if problems:
        raise pytest.UsageError("\n".join(problems))
    options = {  # every suite's typed options (check_settings found the given ones valid)
        name: suite.parse_options(settings.suite_options.get(name))
        for name, suite in registry.suites.items()
    }
    shard = None
    if config.getoption("shard"):
        try:
            shard = parse_shard(config.getoption("shard"))
        except ValueError as exc:
            raise pytest.UsageError(str(exc)) from None
        if config.getoption("rescore"):
            raise pytest.UsageError(
                "--shard with --rescore: re-score each shard's record on its own (it stays "
                "that shard)"
            )
    replay = None
    if config.getoption("rescore"):
        try:
            replay = read_record(Path(config.getoption("rescore")))
        except RecordError as exc:
            raise pytest.UsageError(f"--rescore {exc}") from None
        if not any(it.get("calls") for it in replay.get("items", [])):
            raise pytest.UsageError(
                f"--rescore {config.getoption('rescore')}: the record logs no generations "
                "(written by an extractbench without call logs); rerun the suite instead"
            )
        if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
            # `pytest --rescore RUN.json` without a path: the record's suites, not the
            # testpaths (the harness's own tests); every process (xdist workers too)
            held = {str(it.get("suite")) for it in replay.get("items", [])}
            config.args = [
                str(suite.folder / suite.test.partition("::")[0])
                for name, suite in registry.suites.items()
                if name in held
            ] or list(config.args)
        recorded = (replay.get("settings") or {}).get("shard")
        if recorded:  # a shard's record re-scored is that shard again: merge decides
            shard = parse_shard(recorded)
    if shard is not None and shard.count == 1:
        shard = None  # 1/1 holds every group: the whole run, which decides its own gates
    if shard is not None:
        given = [o for o in ("baseline", "max_regression") if config.getoption(o) is not None]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise pytest.UsageError(
                f"--shard with {flag}: a shard decides nothing; give {flag} to "
                "`extractbench merge` of the shards' records instead"
            )
    baseline = None
    if config.getoption("baseline"):
        try:
            baseline = read_record(Path(config.getoption("baseline")))
        except RecordError as exc:
            raise pytest.UsageError(f"--baseline {exc}") from None
    max_regression = config.getoption("max_regression")
    if max_regression is not None and (
        not math.isfinite(max_regression) or max_regression < 0 or baseline is None
    ):
        raise pytest.UsageError(
            f"--max-regression {max_regression}: needs --baseline and a finite value >= 0"
        )
    run_id = new_run_id()
    option = config.getoption("report_json")
    report_path = Path(option) if option else config.rootpath / "reports" / f"{run_id}.json"
    rescored = config.getoption("rescore")
    if rescored and Path(rescored).resolve() == report_path.resolve():
        raise pytest.UsageError(
            f"--rescore {rescored} --report-json {option}: the same file; write the re-scored "
            "record to another path (a failed re-score would lose the one it reads)"
        )
    config.stash[STATE_KEY] = RunState(
        run_id=run_id,
        started=time.time(),
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        settings=settings,
        report_path=report_path,
        controller=not hasattr(config, "workerinput"),
        baseline=baseline,
        registry=registry,
        options=options,
        replay=replay,
        shard=shard,
        journal=take_journal() if not hasattr(config, "workerinput") else None,
    )
    # imported here: pytest imports fixtures.plugin itself (pytest_plugins, above)
    from fixtures.plugin import setup_models

    setup_models(config, config.stash[STATE_KEY])  # model, judge, data folder, cache
    config.addinivalue_line(
        "markers",
        "suite(name): this test runs the items of the registered suite `name` "
        "(plugins/suite_test.py: suite_test)",
    )
    state = config.stash[STATE_KEY]
    plugin = Controller(config, state) if state.controller else Worker(config, state)
    config.pluginmanager.register(plugin, "extractbench-run")
    if state.journal is not None:  # a supervised child: replay, and journal what runs
        config.pluginmanager.register(Journal(config, state.journal), "extractbench-journal")


# ---------------------------------------------------------------- items


def _load_suite(state: RunState, suite: Suite, data_dir: Path | None) -> SuiteData:
    if suite.name not in state.loaded:
        if data_dir is None:
            raise DataMissing(f"no data folder: {SOURCES_HINT}")
        state.loaded[suite.name] = suite.load(data_dir, state.options[suite.name])
    return state.loaded[suite.name]


def _collect_error(name: str, problem: str) -> pytest.Collector.CollectError:
    """A collection error the controller counts as a usage error (exit 4)."""
    return pytest.Collector.CollectError(f"{USAGE_PREFIX}{name}: {problem}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "bench_item" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker("suite")
    if marker is None or not marker.args:
        raise pytest.Collector.CollectError(
            f"{USAGE_PREFIX}{metafunc.definition.nodeid}: takes bench_item but has no "
            "@pytest.mark.suite(NAME) marker (use plugins.suite_test.suite_test(NAME))"
        )
    name = marker.args[0]
    config = metafunc.config
    state = config.stash[STATE_KEY]
    suite = state.registry.get(name)
    if suite is None:
        raise _collect_error(
            name,
            "not a registered suite (known: "
            f"{', '.join(state.registry.names)}); register it with the "
            "pytest_extractbench_suites hook",
        )
    replay = state.replay
    wanted: set[str] = set()
    if replay is not None:  # --rescore: exactly the record's items of this suite
        wanted = {it["id"] for it in replay.get("items", []) if it.get("suite") == name}
        if not wanted:  # a suite the record does not hold is not part of a rescore
            state.excluded.add(name)
            metafunc.parametrize("bench_item", [])
            return
    try:
        data = _load_suite(state, suite, state.data_dir)
    except DataMissing as exc:
        if not config.getoption("skip_missing_data"):
            raise _collect_error(name, f"data missing: {exc}") from None
        state.skipped[name] = f"data missing: {exc}"
        reason = f"{name}: data missing (--skip-missing-data): {exc}"
        metafunc.parametrize(
            "bench_item", [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="no-data")]
        )
        return
    except DataError as exc:
        raise _collect_error(name, str(exc)) from None
    items: list[Item] = data.items
    seen: set[str] = set()
    for it in items:
        if it.id in seen or not it.id.startswith(f"{name}/"):
            problem = "is duplicated" if it.id in seen else f"does not start with {name}/"
            raise _collect_error(name, f"item id {it.id!r} {problem}")
        seen.add(it.id)
    if not items:
        raise _collect_error(name, "the suite has no items: its data files hold none")
    limit, limit_source = config.getoption("limit"), "--limit"
    cap = None if config.getoption("full") else state.settings.limits.get(name)
    if cap is not None and (limit is None or cap < limit):  # a limit never enlarges a run
        limit, limit_source = cap, "[tool.extractbench.limits]"
    if replay is not None:
        items = [it for it in items if it.id in wanted]
        limit, limit_source = None, "--rescore"
        if not items:
            raise _collect_error(name, "none of the run record's items exists in the data any more")
    elif limit is not None:
        items = stratified_limit(items, limit, suite.breakdown[0] if suite.breakdown else None)
    if state.shard is not None and replay is None:  # whole groups, after the limit
        items = [it for it in items if state.shard.holds(it.group)]
    state.suites[name] = {
        "breakdown": list(suite.breakdown),
        "items_total": len(data.items),
        "items_selected": len(items),
        "limit": {"value": limit, "source": limit_source} if limit is not None else None,
        "notes": data.notes,
    }
    metafunc.parametrize(
        "bench_item",
        [pytest.param(it, id=it.id, marks=pytest.mark.xdist_group(it.group)) for it in items],
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave out the tests of suites a ``--rescore`` record does not hold."""
    state = config.stash.get(STATE_KEY, None)
    if state is None or not state.excluded:
        return
    keep, drop = [], []
    for item in items:
        marker = item.get_closest_marker("suite")
        excluded = marker is not None and marker.args and marker.args[0] in state.excluded
        (drop if excluded else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_collection_finish(session: pytest.Session) -> None:
    """After ``-k``, ``-m`` and ``--deselect``: the items each suite will really run."""
    state = session.config.stash.get(STATE_KEY, None)
    if state is None or not state.suites:
        return
    running = dict.fromkeys(state.suites, 0)
    for item in session.items:
        bench_item = bench_item_of(item)
        if isinstance(bench_item, Item):
            running[bench_item.suite] += 1
    for name, info in state.suites.items():
        dropped = (info["items_selected"] or 0) - running[name]
        if dropped and running[name]:  # a part of the suite: the gates would see a subset
            info["items_deselected"] = dropped
        info["items_selected"] = running[name]


@pytest.fixture
def score(request: pytest.FixtureRequest) -> Generator[ItemRecorder, None, None]:
    """Record named metric values for the current item: ``score("accuracy", 1.0)``.

    Also ``score.record_generation(gen)`` records the model output. Values travel to the xdist
    controller inside the test report and are aggregated there only.
    """
    bench_item = bench_item_of(request.node)
    if not isinstance(bench_item, Item):
        pytest.fail("the score fixture needs a test that takes bench_item", pytrace=False)
    recorder = ItemRecorder(bench_item, request.node.user_properties)
    request.node.stash[RECORDER_KEY] = recorder
    with recording_calls(recorder.calls):
        yield recorder


def _error_line(report: TestReport) -> str:
    """``file:line: ExcType: message`` (the message's first lines) of a failed report."""
    longrepr = report.longrepr
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        message = "\n".join(str(crash.message).strip().splitlines()[:3])
        return f"{crash.path}:{crash.lineno}: {message}"[:1000]
    text = str(longrepr or "").strip()
    return "\n".join(text.splitlines()[-3:])[:1000]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, TestReport, TestReport]:
    report = yield
    bench_item = bench_item_of(item)
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
    entry["test"] = report.nodeid  # its JUnit name (extractbench merge writes JUnit from records)
    if report.failed:
        entry["error"] = _error_line(report)
        if call.excinfo is not None and call.excinfo.errisinstance(RunStopper):
            entry["stop"] = {"kind": call.excinfo.value.kind, "message": str(call.excinfo.value)}
    state = item.config.stash[STATE_KEY]
    if not state.controller and bench_item.suite not in state.sent_suites:
        # the controller learns each suite's facts with its first item, so a run
        # interrupted before the workers finish still has them
        state.sent_suites.add(bench_item.suite)
        report.extractbench_suite = {bench_item.suite: state.suites.get(bench_item.suite)}  # type: ignore[attr-defined]
    report.extractbench_item = entry  # type: ignore[attr-defined]
    return report


# ---------------------------------------------------------------- end of run
