"""Collection: a suite's items as the parametrized cases of its test.

Each suite's items are loaded once per process, checked (ids unique and prefixed by the
suite), capped (``--limit``, the default caps of ``[tool.extractbench.limits]``,
stratified), split by ``--shard`` into whole groups, or restricted to a ``--rescore``
record's items; each becomes ``pytest.param(item, id=item.id)`` marked with its
``xdist_group`` so a group runs on one worker. After ``-k``, ``-m``, ``--deselect`` and
``--lf``, :func:`count_running` notes how many items of each suite really run and how
many a selection left out (the verdict refuses to decide gates on such a subset).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from extractbench.fixtures.nodes import bench_item_of
from extractbench.plugins.record import LimitInfo
from extractbench.plugins.run.command_suites import selected_suites
from extractbench.plugins.run.config import RunConfig
from extractbench.plugins.run.run_order import (
    order_items,
    order_seed,
    running_order,
    stop_ranges,
    stops_when_decided,
)
from extractbench.plugins.run.selection import stratified_limit
from extractbench.plugins.run.state import USAGE_PREFIX, RunState, SuiteFacts
from extractbench.plugins.verdict.baseline import compared_metrics
from extractbench.suites import derived_cache
from extractbench.suites.datasets.resolve import offline_from_env
from extractbench.suites.datasets.verify import verify_suite_data
from extractbench.suites.item import DataError, DataMissing, Item, SuiteData
from extractbench.suites.model import ModelInfo
from extractbench.suites.protocol import Suite
from extractbench.suites.registry import SOURCES_HINT

__all__ = ["parametrize_suite", "exclude_unrecorded", "count_running", "selected_items"]


def _collect_error(name: str, problem: str) -> pytest.Collector.CollectError:
    """A collection error the controller counts as a usage error (exit 4)."""
    return pytest.Collector.CollectError(f"{USAGE_PREFIX}{name}: {problem}")


def _load(state: RunState, cfg: RunConfig, suite: Suite, data_dir: Path | None) -> SuiteData:
    if suite.name not in state.loaded:
        local = suite.reads_local_data(cfg.suite_options.get(suite.name))
        if data_dir is None and local:
            raise DataMissing(f"no data folder: {SOURCES_HINT}")
        if local:
            assert data_dir is not None  # refused above
            # every manifest file of the suite, against its sha256 (a memo keeps it cheap
            # while unchanged); a changed or missing one is a DataError: exit 4
            verify_suite_data(data_dir, suite.name, allow_changed=cfg.allow_changed_data)
        # offline, a damaged derived-cache entry is an error naming it, not a rebuild
        with derived_cache.offline(cfg.offline or offline_from_env()):
            state.loaded[suite.name] = suite.load(data_dir, cfg.suite_options[suite.name])
    return state.loaded[suite.name]


def _checked(name: str, items: Sequence[Item]) -> None:
    seen: set[str] = set()
    for it in items:
        if it.id in seen or not it.id.startswith(f"{name}/"):
            problem = "is duplicated" if it.id in seen else f"does not start with {name}/"
            raise _collect_error(name, f"item id {it.id!r} {problem}")
        seen.add(it.id)
    if not items:
        raise _collect_error(name, "the suite has no items: its data files hold none")


def _selected(
    cfg: RunConfig, suite: Suite, items: list[Item], wanted: set[str]
) -> tuple[list[Item], LimitInfo | None]:
    """The items this run selects of ``items``, and the cap that applied."""
    if cfg.rescore is not None:  # exactly the record's items
        items = [it for it in items if it.id in wanted]
        if not items:
            raise _collect_error(
                suite.name, "none of the run record's items exists in the data any more"
            )
        return items, None
    limit, source = cfg.limit, "--limit"
    cap = None if cfg.full else cfg.settings.limits.get(suite.name)
    if cap is not None and (limit is None or cap < limit):  # a limit never enlarges a run
        limit, source = cap, "[tool.extractbench.limits]"
    if limit is not None:
        items = stratified_limit(items, limit, suite.breakdown[0] if suite.breakdown else None)
    if cfg.shard is not None:  # whole groups, after the limit
        items = [it for it in items if cfg.shard.holds(it.group)]
    return items, (LimitInfo(value=limit, source=source) if limit is not None else None)


def parametrize_suite(
    metafunc: pytest.Metafunc,
    cfg: RunConfig,
    state: RunState,
    data_dir: Path | None,
    model_info: Callable[[], ModelInfo] | None = None,
) -> None:
    """Parametrize a suite's test (marked ``@pytest.mark.suite(NAME)``) with its items.

    ``model_info`` gives the model's identity when a default run order needs its digest
    (:func:`plugins.run.run_order.order_seed`).

    Raises:
        pytest.Collector.CollectError: a usage error (unknown suite, data missing or
            malformed, duplicate ids, no items), reported by the controller (exit 4).
    """
    marker = metafunc.definition.get_closest_marker("suite")
    if marker is None or not marker.args:
        raise pytest.Collector.CollectError(
            f"{USAGE_PREFIX}{metafunc.definition.nodeid}: takes bench_item but has no "
            "@pytest.mark.suite(NAME) marker (use plugins.run.suite_test.suite_test(NAME))"
        )
    name = marker.args[0]
    suite = cfg.registry.get(name)
    if suite is None:
        raise _collect_error(
            name, f"not a registered suite (known: {', '.join(cfg.registry.names)}); register "
            "it with the pytest_extractbench_suites hook",
        )  # fmt: skip
    # a suite the command did not select, collected beside one it did (a test file may hold
    # several suites) or under a folder above it (a suite run on request): its data
    # is neither loaded nor required. Workers decide as the controller does, from the
    # command's own paths.
    selected = selected_suites(
        metafunc.config, cfg.registry, cfg.settings.configured, cfg.settings.suites
    )
    if suite not in selected and (selected or suite.on_request):
        state.excluded.add(name)
        metafunc.parametrize("bench_item", [])
        return
    wanted: set[str] = set()
    if cfg.rescore is not None:
        wanted = {it.id for it in cfg.rescore.items if it.suite == name}
        if not wanted:  # a suite the record does not hold is not part of a rescore
            state.excluded.add(name)
            metafunc.parametrize("bench_item", [])
            return
    try:
        data = _load(state, cfg, suite, data_dir)
    except DataMissing as exc:
        if not cfg.skip_missing_data:
            raise _collect_error(name, f"data missing: {exc}") from None
        state.skipped[name] = f"data missing: {exc}"
        reason = f"{name}: data missing (--skip-missing-data): {exc}"
        metafunc.parametrize(
            "bench_item", [pytest.param(None, marks=pytest.mark.skip(reason=reason), id="no-data")]
        )
        return
    except DataError as exc:
        raise _collect_error(name, str(exc)) from None
    _checked(name, data.items)
    items, limit = _selected(cfg, suite, data.items, wanted)
    order = None
    if cfg.rescore is not None:  # the recorded order, and the items it left out
        recorded = cfg.rescore.suites.get(name)
        order = recorded.run_order if recorded is not None else None
    elif stops_when_decided(metafunc.config, cfg):
        baseline = cfg.gates.baseline
        checks = baseline is not None and cfg.gates.max_regression is not None
        compared = compared_metrics(baseline, name) if baseline is not None and checks else []
        ranges = stop_ranges(cfg, suite, compared)
        if ranges is not None:
            stratum = suite.breakdown[0] if suite.breakdown else None
            given = cfg.order_seed is not None
            seed = (
                cfg.order_seed
                if cfg.order_seed is not None
                else order_seed(model_digest(model_info), [it.id for it in items])
            )
            declared: dict[str, list[float] | None] = {}
            for pattern, low, high in suite.ranges:  # first match wins: keep the first
                finite = math.isfinite(low) and math.isfinite(high)
                declared.setdefault(pattern, [float(low), float(high)] if finite else None)
            items, order = order_items(
                items, seed, stratum, ranges, seed_given=given, metric_ranges=declared
            )
    state.suites[name] = SuiteFacts(
        breakdown=list(suite.breakdown),
        version=suite.version,
        items_total=len(data.items),
        items_selected=len(items) + (len(order.not_run) if order is not None else 0),
        limit=limit,
        notes=data.notes,
        missing_labels=list(data.missing_labels),
        run_order=order,
    )
    metafunc.parametrize(
        "bench_item",
        [pytest.param(it, id=it.id, marks=pytest.mark.xdist_group(it.group)) for it in items],
    )


def model_digest(model_info: Callable[[], ModelInfo] | None) -> str:
    """The model file's SHA-256, else (an endpoint, the fake backend) its backend, name and
    path: never the generation seed, so a retry with another ``--seed`` keeps the order."""
    if model_info is None:
        return ""
    info = model_info()
    return info.sha256 or f"{info.backend}:{info.name}:{info.path}"


def exclude_unrecorded(config: pytest.Config, state: RunState, items: list[pytest.Item]) -> None:
    """Deselect the tests of suites this run leaves out: those a ``--rescore`` record does
    not hold, and suites run on request that the command did not name."""
    if not state.excluded:
        return
    keep, drop = [], []
    for item in items:
        marker = item.get_closest_marker("suite")
        excluded = marker is not None and marker.args and marker.args[0] in state.excluded
        (drop if excluded else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def count_running(state: RunState, items: Sequence[pytest.Item]) -> None:
    """After ``-k``, ``-m``, ``--deselect`` and ``--lf``: each suite's items that really
    run, and (``items_deselected``) how many such a selection left out of it."""
    running: dict[str, list[Item]] = {name: [] for name in state.suites}
    for item in items:
        bench_item = bench_item_of(item)
        if isinstance(bench_item, Item) and bench_item.suite in running:
            running[bench_item.suite].append(bench_item)
    for name, facts in state.suites.items():
        not_run = len(facts.run_order.not_run) if facts.run_order is not None else 0
        dropped = (facts.items_selected or 0) - not_run - len(running[name])
        if dropped:  # a part of the suite, or all of it: the gates would see a subset
            facts.items_deselected = dropped
            if facts.run_order is not None and not not_run:
                facts.run_order = running_order(facts.run_order, running[name])
        facts.items_selected = len(running[name]) + not_run


def selected_items(cfg: RunConfig, state: RunState, data_dir: Path | None) -> list[Item]:
    """Every item the run selects of the suites :func:`plugins.run.data.select_suites` chose
    (loaded once into ``state``, capped as collection caps them), before any worker starts:
    what ``--serve`` sizes its server for. A suite whose data cannot be loaded is left out
    here; collection reports it."""
    out: list[Item] = []
    for name in state.selected:
        suite = cfg.registry.suites.get(name)
        if suite is None or name in state.skipped or cfg.rescore is not None:
            continue
        try:
            data = _load(state, cfg, suite, data_dir)
        except (DataMissing, DataError):
            continue
        out += _selected(cfg, suite, list(data.items), set())[0]
    return out
