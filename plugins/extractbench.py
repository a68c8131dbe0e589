"""The extractbench pytest plugin (the ``pytest11`` entry point): thin hooks only.

The flow, stage by stage (each a folder of ``plugins/``):

- ``run/``: options parsed once into a frozen :class:`~plugins.run.config.RunConfig`
  (``pytest_configure``), items collected as each suite's parametrized cases
  (``collection``), run and recorded (``suite_test``, ``item_record``), crashes survived
  (``crashes``, ``supervisor``, ``scheduling``), the controller's bookkeeping
  (``controller``) and the end of the run (``finish``);
- ``verdict/``: aggregation, gates, baseline and ``decide``, the one decision;
- ``outputs/``: the typed run record and ``write_outputs``, which writes the record,
  JUnit, HTML and markdown from it;
- ``cli/``: ``extractbench report``, ``merge``, ``schema`` and the rest, through the same
  two calls.

For a benchmark run this plugin writes ``--junitxml`` and ``--html`` itself, from the run
record (pytest's junitxml and pytest-html stay in charge of every other run), so the live
run, ``--rescore``, ``merge`` and ``report`` write the same files from the same record.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

import pytest

from extractbench.fixtures.models.registry import backend_names, installed_backends
from extractbench.fixtures.models.replay import ReplayData
from extractbench.fixtures.models.wrappers import MODEL_LOADS, recording_calls
from extractbench.fixtures.nodes import bench_item_of
from extractbench.fixtures.plugin import MODELS_KEY, setup_models
from extractbench.plugins.outputs.benchmark_json import SpeedFeed
from extractbench.plugins.run import collection
from extractbench.plugins.run.command_line import add_hardware_options, add_options
from extractbench.plugins.run.command_suites import selected_suites
from extractbench.plugins.run.config import CONFIG_KEY, run_config
from extractbench.plugins.run.controller import MODEL_EVENTS, SUITE_FACTS, Controller
from extractbench.plugins.run.early_stop import EarlyStop
from extractbench.plugins.run.item_record import (
    ITEM_ENTRY,
    ItemRecorder,
    redact_report,
    report_entry,
)
from extractbench.plugins.run.run_order import stops_when_decided
from extractbench.plugins.run.serve_start import ServeStart
from extractbench.plugins.run.state import STATE_KEY, RunState
from extractbench.plugins.run.supervisor import Journal, should_supervise, supervise, take_journal
from extractbench.plugins.run.worker import Worker
from extractbench.suites.item import Item
from extractbench.suites.model_files import ModelFileError
from extractbench.suites.registry import Registry, RegistryError, entry_point_suites

# The model and data fixtures, and the fixture that runs one item.
pytest_plugins = ["extractbench.fixtures.plugin", "extractbench.plugins.run.suite_test"]

RECORDER_KEY = pytest.StashKey[ItemRecorder]()


def pytest_addoption(parser: pytest.Parser) -> None:
    try:
        kinds = installed_backends()
    except ModelFileError:
        kinds = {}  # pytest_configure reports it as a usage error
    group = add_options(parser, tuple(kinds) or backend_names())
    parser.addini(
        "extractbench_gates",
        type="linelist",
        default=[],
        help="extractbench release gates, one 'suite/metric>=NUMBER' per line (any config "
        "file; pyproject.toml may use [tool.extractbench.gates] instead)",
    )
    try:
        suites = entry_point_suites()
    except RegistryError:
        return  # pytest_configure reports it as a usage error
    for suite in suites:
        if suite.add_options is not None:
            suite.add_options(group)  # a suite's own options (MINEA: --needles)
    add_hardware_options(group, kinds)  # last: a backend cannot take the harness's names


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from extractbench.plugins import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> int | None:
    """``-n 0`` with a model in process: run the command in a supervised child, so a
    segfault is a recorded crash, not a lost run (``--crash-guard``, plugins/run/supervisor.py)."""
    return supervise(config) if should_supervise(config) else None


def _registry(config: pytest.Config) -> Registry:
    extra = [suite for suites in config.hook.pytest_extractbench_suites() for suite in suites]
    try:
        return Registry.installed(extra)
    except RegistryError as exc:
        raise pytest.UsageError(str(exc)) from None


def _take_reports(config: pytest.Config, registry: Registry) -> dict[str, str | None]:
    """A benchmark run writes ``--junitxml`` and ``--html`` from its record: take them from
    pytest's junitxml and pytest-html before they configure (this hook runs first)."""
    benchmark = config.getoption("rescore") or selected_suites(config, registry)
    taken: dict[str, str | None] = {"junit": None, "html": None}
    if not benchmark:
        return taken
    for key, option in (("junit", "xmlpath"), ("html", "htmlpath")):
        value = getattr(config.option, option, None)
        if value:
            taken[key] = str(Path(os.path.expandvars(value)).expanduser().absolute())
            setattr(config.option, option, None)
    return taken


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    registry = _registry(config)
    cfg = run_config(config, registry, _take_reports(config, registry))
    if cfg.rescore is not None and config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        # `pytest --rescore RUN.json` without a path: the record's suites, not the
        # testpaths (the harness's own tests); every process (xdist workers too)
        held = {it.suite for it in cfg.rescore.items}
        config.args = [
            str(s.folder / s.test.partition("::")[0])
            for n, s in registry.suites.items()
            if n in held
        ] or list(config.args)
    config.stash[CONFIG_KEY] = cfg
    state = config.stash[STATE_KEY] = RunState()
    replay = None
    if cfg.rescore is not None:
        calls = [c for it in cfg.rescore.items for c in it.calls]
        replay = ReplayData(cfg.rescore.model, cfg.rescore.judge, calls)
    setup = setup_models(config, cfg.models, cfg.data_dir, replay)
    config.addinivalue_line(
        "markers", "suite(name): this test runs the items of the registered suite `name`"
    )
    if hasattr(config, "workerinput"):
        config.pluginmanager.register(Worker(config, state), "extractbench-run")
        return
    journal = take_journal()
    stop = stops_when_decided(config, cfg)  # a usage error before any output is locked
    controller = Controller(config, cfg, state, setup, journal)
    config.pluginmanager.register(controller, "extractbench-run")
    if stop and selected_suites(config, cfg.registry):  # not the harness's own tests
        early = EarlyStop(config, cfg, state, controller.progress.event)
        config.pluginmanager.register(early, "extractbench-early-stop")
    if setup.serve_plan is not None:
        config.pluginmanager.register(ServeStart(config, cfg, state, setup), "extractbench-serve")
    feed = SpeedFeed(
        lambda: (entry.model_dump() for entry in state.items.values()), state.warnings.append
    )
    config.pluginmanager.register(feed, "extractbench-speed")
    if journal is not None:  # a supervised child: replay, and journal what runs
        config.pluginmanager.register(Journal(config, journal), "extractbench-journal")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "bench_item" in metafunc.fixturenames:
        config = metafunc.config
        model = config.stash[MODELS_KEY].model
        collection.parametrize_suite(
            metafunc,
            config.stash[CONFIG_KEY],
            config.stash[STATE_KEY],
            config.stash[MODELS_KEY].data_dir,
            model.info,
        )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if STATE_KEY in config.stash:
        collection.exclude_unrecorded(config, config.stash[STATE_KEY], items)


def pytest_collection_finish(session: pytest.Session) -> None:
    if STATE_KEY in session.config.stash:
        collection.count_running(session.config.stash[STATE_KEY], session.items)


@pytest.fixture
def score(request: pytest.FixtureRequest) -> Generator[ItemRecorder, None, None]:
    """Record named metric values for the current item: ``score("accuracy", 1.0)``.

    Also ``score.record_generation(gen)`` records the model output. Values travel to the xdist
    controller inside the test report and are aggregated there only.
    """
    bench_item = bench_item_of(request.node)
    if not isinstance(bench_item, Item):
        pytest.fail("the score fixture needs a test that takes bench_item", pytrace=False)
    suite = request.config.stash[CONFIG_KEY].registry.get(bench_item.suite)
    recorder = ItemRecorder(
        bench_item, request.node.user_properties, suite.score_range if suite else None
    )
    request.node.stash[RECORDER_KEY] = recorder
    with recording_calls(recorder.calls):
        yield recorder


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    bench_item = bench_item_of(item)
    if not isinstance(bench_item, Item):
        redact_report(report)
        return report
    entry = report_entry(bench_item, item.stash.get(RECORDER_KEY, None), report, call)
    redact_report(report)  # after its error line is taken
    if entry is None:
        return report
    state = item.config.stash[STATE_KEY]
    if hasattr(item.config, "workerinput") and bench_item.suite not in state.sent_suites:
        # the controller learns each suite's facts with its first item, so a run
        # interrupted before the workers finish still has them
        state.sent_suites.add(bench_item.suite)
        facts = state.suites.get(bench_item.suite)
        SUITE_FACTS.put(
            report, {bench_item.suite: facts.model_dump() if facts is not None else None}
        )
    ITEM_ENTRY.put(report, entry)
    if MODEL_LOADS:
        worker = getattr(item.config, "workerinput", {}).get("workerid")
        MODEL_EVENTS.put(
            report, [f"{line} ({worker})" if worker else line for line in MODEL_LOADS]
        )
        MODEL_LOADS.clear()
    return report
