"""The live run's facts as a run record (the verdict is added by ``plugins.verdict``)."""

from __future__ import annotations

import platform
import time
from typing import Any

import pytest

from extractbench.fixtures.models.chat import SHOWN, chat_facts
from extractbench.fixtures.models.core_share import shares_cores
from extractbench.fixtures.models.redact import redact_json, redact_text
from extractbench.fixtures.models.registry import installed_backends
from extractbench.fixtures.plugin import ModelSetup, workers
from extractbench.plugins.outputs.code_version import code_version
from extractbench.plugins.outputs.endpoint_stats import endpoint_stats
from extractbench.plugins.outputs.formats import recorded_settings
from extractbench.plugins.record import (
    SCHEMA_VERSION,
    ItemEntry,
    RescoreOf,
    RunRecord,
    Selection,
    item_counts,
)
from extractbench.plugins.run.config import RunConfig
from extractbench.plugins.run.early_stop import not_run
from extractbench.plugins.run.state import RunState
from extractbench.suites.suite_options import dump_options

__all__ = ["build_record", "selection_of"]


def _follows_core_share(backend: str) -> bool:
    """Whether the model under test moves to the cores of finished workers (``replay``,
    ``--rescore``'s, is no registered backend and runs nothing)."""
    kind = installed_backends().get(backend)
    return kind is not None and kind.follows_core_share


def _settings(config: pytest.Config, cfg: RunConfig, setup: ModelSetup) -> dict[str, Any]:
    spec, data_dir = setup.model, setup.data_dir
    numprocesses = getattr(config.option, "numprocesses", None)
    options = {name: dump_options(value) for name, value in cfg.suite_options.items()}
    return {
        "argv": list(cfg.argv),
        "backend": spec.backend,
        "seed": spec.seed,
        "n_threads": spec.n_threads,
        "threads_shared": shares_cores(workers(config), setup.options.threads)
        and _follows_core_share(spec.backend),
        "workers": numprocesses or 0,
        "dist": getattr(config.option, "dist", "no"),
        "limit": cfg.limit,
        "full": cfg.full,
        **({"shard": str(cfg.shard)} if cfg.shard is not None else {}),
        **({"server": setup.server.describe()} if setup.server is not None else {}),
        "data_dir": str(data_dir) if data_dir else None,
        "gates": [g.expression for g in cfg.settings.gates],
        "gates_from": list(cfg.settings.gates_from),
        "junit_family": str(config.getini("junit_family")),
        **recorded_settings(config.getoption),  # the formats' (--junit-pass-mark)
        "suite_options": {name: options[name] for name in sorted(options)},
        # the options that decide what a suite's scores mean: a baseline is checked on
        # them even where the suite is not installed (a conftest's, read by `report`)
        "protocol_options": {
            name: list(type(cfg.suite_options[name]).protocol_fields) for name in sorted(options)
        },
        "python": platform.python_version(),
        "pytest": pytest.__version__,
        "platform": platform.platform(),
    }


def selection_of(cfg: RunConfig, state: RunState) -> Selection:
    """What this run's command selected, as the verdict reads it."""
    unloaded = {
        name: error.split(": ", 1)[1]
        for error in state.usage_errors
        for name in cfg.registry.names
        if error.startswith(f"{name}: ")
    }
    deselected = {
        name: facts.items_deselected
        for name, facts in state.suites.items()
        if facts.items_deselected
    }
    return Selection(
        suites=list(state.selected), skipped=dict(state.skipped), unloaded=unloaded,
        deselected=deselected, allow_subset=cfg.allow_subset,
        shard=str(cfg.shard) if cfg.shard is not None else None, narrow=not state.whole,
    )  # fmt: skip


def _expected(state: RunState) -> int:
    known = [facts.items_selected for facts in state.suites.values()]
    expected = sum(n or 0 for n in known)
    if state.collected and (not state.suites or None in known):
        # -n: interrupted before every suite's facts arrived; a skipped suite's one
        # "no-data" test is not an item
        expected = state.collected - sum(1 for name in state.skipped if name in state.suites)
    return expected


def _model_sections(
    cfg: RunConfig, setup: ModelSetup
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    if cfg.rescore is not None:  # --rescore: the generations are the recorded model's
        return dict(cfg.rescore.model), cfg.rescore.judge
    try:
        judge = setup.judge.describe() if setup.judge is not None else None
        model = setup.model.describe()
        if setup.worker_gpus:  # one GPU per xdist worker (fixtures/worker_gpu.py)
            model["worker_gpus"] = {
                f"gw{i}": g.describe() if g is not None else "cpu"
                for i, g in enumerate(setup.worker_gpus)
            }
        return model, judge
    except OSError as exc:
        spec = setup.model
        return {"backend": spec.backend, "path": str(spec.path), "error": str(exc)}, None


def _chat_section(items: list[ItemEntry], cfg: RunConfig) -> dict[str, Any] | None:
    """The record's ``chat`` facts (:func:`fixtures.models.chat.chat_facts`); the final
    messages the calls logged move there from the items' call logs (one copy)."""
    if not items:
        return None
    earlier = [cfg.rescore.chat] if cfg.rescore is not None else []
    facts = chat_facts([it.model_dump(include={"id", "suite", "calls"}) for it in items], earlier)
    for item in items:
        for call in item.calls:
            for key in SHOWN:
                call.pop(key, None)
    return facts


def _redacted(item: ItemEntry) -> ItemEntry:
    """The item with its error line redacted (the run state keeps what arrived)."""
    return item.model_copy(update={"error": redact_text(item.error)}) if item.error else item


def build_record(
    config: pytest.Config, cfg: RunConfig, state: RunState, setup: ModelSetup, exitstatus: int
) -> RunRecord:
    """The run record of the items finished so far: facts only (the verdict, aggregates
    and gates come from :func:`plugins.verdict.decide`). No credential of a
    ``--base-url`` and no other secret the process knows reaches it (settings, model, errors
    are redacted; the items' predictions and references keep their URLs, their endpoints
    and answers redacted at source; :func:`plugins.outputs.write_outputs` masks the
    secrets once more in every file)."""
    items = [_redacted(state.items[key]) for key in sorted(state.items)]
    suites = {name: facts.record_info() for name, facts in state.suites.items()}
    for name, ids in not_run(state).items():  # the items a decided suite left out
        suites[name]["run_order"]["not_run"] = ids
    model, judge = _model_sections(cfg, setup)
    facts: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "run_id": cfg.run_id,
        "started_at": cfg.started_at,
        "duration_s": round(time.time() - cfg.started, 3),
        "exit_status": int(exitstatus),
        "pytest_exit_status": int(exitstatus),
        "interrupted": state.interrupted,
        "stopped": state.stopped,
        "usage_errors": list(state.usage_errors),
        "crashes": [crash.model_dump() for crash in state.crashes],
        "other_tests": [state.other_tests[k].model_dump() for k in sorted(state.other_tests)],
        "suites_skipped": dict(state.skipped),
        "warnings": [*cfg.settings.warnings, *state.warnings],
        "data": state.data,
        "code": code_version(),
        "model": model,
        "judge": judge,
        "settings": _settings(config, cfg, setup),
        "suites": suites,
    }
    facts = redact_json(facts)
    record = RunRecord.model_validate(
        {**facts, "items": [], "counts": {}, "selection": selection_of(cfg, state).model_dump()}
    )
    record.items = items
    left = sum(len(info.run_order.not_run) for info in record.suites.values() if info.run_order)
    record.counts = item_counts(items, _expected(state), left)
    endpoints = endpoint_stats([it.model_dump() for it in items])
    if endpoints:
        record.endpoints = endpoints
    record.chat = _chat_section(items, cfg)
    if cfg.rescore is not None:
        record.rescore_of = RescoreOf(
            run_id=cfg.rescore.run_id, path=str(cfg.rescore_path), complete=cfg.rescore.complete
        )
    return record
