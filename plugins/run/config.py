"""The run configuration: every option and setting parsed once, at configure, into a
frozen value that the rest of the run reads (``config.stash[CONFIG_KEY]``); the model's
options into :class:`fixtures.models.model_options.ModelOptions`, the GPU and batching
settings and each backend's own options included."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from extractbench.fixtures.models.backend_options import (
    backend_option_owners,
    option_flag,
    parse_backend_options,
)
from extractbench.fixtures.models.gpus import parse_gpus
from extractbench.fixtures.models.model_options import ModelOptionError, ModelOptions
from extractbench.fixtures.models.registry import BackendKind, backend_kind, installed_backends
from extractbench.plugins.outputs.ctrf import ci_run_id
from extractbench.plugins.outputs.write import Targets
from extractbench.plugins.record import RecordError, RunRecord, load_record, new_run_id
from extractbench.plugins.run.command_suites import selected_suites
from extractbench.plugins.run.output_targets import output_targets
from extractbench.plugins.run.project_config import (
    Settings,
    SettingsError,
    project_pyprojects,
    read_settings,
    typed_suite_options,
    unknown_gates,
    unknown_limits,
    unknown_listed_suites,
)
from extractbench.plugins.run.shard import Shard, parse_shard
from extractbench.plugins.verdict.baseline import (
    Protocol,
    incomparable,
    incomparable_line,
    partial_baseline,
)
from extractbench.plugins.verdict.decision import GateSet
from extractbench.plugins.verdict.gates import GateError
from extractbench.plugins.verdict.speed import check_max_slowdown
from extractbench.suites.registry import Registry
from extractbench.suites.suite_options import SuiteOptions

__all__ = ["RunConfig", "CONFIG_KEY", "run_config", "model_options", "given_backend_options"]


@dataclass(frozen=True)
class RunConfig:
    """One run's configuration (see :func:`run_config`).

    Attributes:
        run_id: the run's id (``20261122T104500Z-3f9a1c``).
        started: ``time.time()`` at configure; ``started_at`` the same as ISO text.
        registry: the suites this run knows.
        models: the model options (``fixtures.models.model_options``).
        settings: gates, caps and raw suite options as configured (for the record).
        suite_options: suite -> its ``Options`` object, parsed once (every registered suite).
        gates: the gates and the baseline comparison (``--baseline``).
        limit: ``--limit`` (None: the default caps apply unless ``--full``).
        full: ``--full``: ignore the default caps.
        shard: ``--shard K/N`` (None for the whole run; ``1/1`` is the whole run).
        rescore: the record ``--rescore`` re-scores, and its path.
        allow_subset: ``--allow-subset``.
        allow_changed_data: ``--allow-changed-data``: data files that differ from the
            manifest are used (the record lists them) instead of a usage error.
        skip_missing_data: ``--skip-missing-data``.
        data_dir, offline, mirror: where the data comes from.
        targets: the files the run writes.
        argv: the command line, for the record.
        ctrf_run_id: the logical run this process belongs to (``--ctrf-run-id``, else the
            CI's pipeline run, else None): the shards of one run share it.
        progress_s: ``--progress``: seconds between progress lines (0: none).
        order_seed: ``--order-seed``: the seed of ``--stop-when-decided``'s run order
            (None: derived from the model's digest and each suite's items).
    """

    run_id: str
    started: float
    started_at: str
    registry: Registry
    models: ModelOptions
    settings: Settings
    suite_options: Mapping[str, SuiteOptions]
    gates: GateSet
    limit: int | None
    full: bool
    shard: Shard | None
    rescore: RunRecord | None
    rescore_path: str | None
    allow_subset: bool
    allow_changed_data: bool
    skip_missing_data: bool
    data_dir: str | None
    offline: bool
    mirror: str | None
    targets: Targets
    argv: tuple[str, ...]
    ctrf_run_id: str | None = None
    progress_s: float = 60.0
    order_seed: int | None = None


CONFIG_KEY = pytest.StashKey[RunConfig]()


def _read(path: str, option: str) -> RunRecord:
    try:
        return load_record(Path(path))
    except RecordError as exc:
        raise pytest.UsageError(f"{option} {exc}") from None


def _benchmark(config: pytest.Config, registry: Registry) -> bool:
    """Whether the command runs suites (or re-scores a record): not the harness's own tests."""
    return bool(config.getoption("rescore") or selected_suites(config, registry))


def _rootdir_hint(config: pytest.Config) -> str:
    """Why pytest may have passed over the project's configuration: before plugins add their
    options it takes every argument that names an existing path, an option's value included
    (``--data-dir DIR``), as a place to look for its rootdir and config file."""
    where = config.invocation_params.dir
    taken = set(config.args)

    def exists(arg: str) -> bool:
        try:
            return (where / arg).exists()
        except OSError:  # e.g. a name too long to be a path: not one pytest could take
            return False

    strays = [
        a for a in map(str, config.invocation_params.args)
        if not a.startswith("-") and a not in taken and exists(a)
    ]  # fmt: skip
    if not strays:
        return ""
    return (
        f" (pytest took {strays[0]} on the command line as a place for its rootdir and config, "
        f"and chose {config.rootpath}: write path options with '=', e.g. --data-dir=DIR, or "
        "set EXTRACTBENCH_DATA)"
    )


def _settings(
    config: pytest.Config, registry: Registry
) -> tuple[Settings, dict[str, SuiteOptions]]:
    own = {  # a suite's own command-line options (MINEA: --needles), over --suite-option
        suite.name: suite.cli_options(config.getoption)
        for suite in registry.suites.values()
        if suite.cli_options is not None
    }
    gates_file = config.getoption("gates_file")
    # pytest's getoption is typed Any | None; these append options default to []
    gates = cast("list[str]", config.getoption("gate"))
    suite_options = cast("list[str]", config.getoption("suite_option"))
    places = [config.invocation_params.dir, config.rootpath]
    # --pyargs names resolve to the installed package, not to a project: not a place here
    places += [config.invocation_params.dir / a.split("::")[0] for a in config.args]
    try:
        settings = read_settings(
            config.inipath, config.getini("extractbench_gates"), gates,
            Path(gates_file) if gates_file else None, suite_options,
            project_pyprojects(p for p in places if p.exists()), own,
        )  # fmt: skip
    except (GateError, SettingsError) as exc:
        raise pytest.UsageError(str(exc)) from None
    project = config.inipath.parent if config.inipath is not None else None
    typed, problems = typed_suite_options(
        settings.suite_options, registry, settings.options_from, project
    )
    problems = (
        unknown_gates(settings.gates, registry)
        + unknown_limits(settings.limits, registry)
        + unknown_listed_suites(settings, registry)
        + problems
    )
    if not config.getoption("ignore_project_gates") and _benchmark(config, registry):
        # a release gate the run silently drops would pass at any score
        problems += [
            f"{w}; or --ignore-project-gates to run without them{_rootdir_hint(config)}"
            for w in settings.warnings
        ]
    if problems:
        raise pytest.UsageError("\n".join(problems))
    return settings, typed


def _shard(config: pytest.Config, rescore: RunRecord | None) -> Shard | None:
    text = config.getoption("shard")
    if text and rescore is not None:
        raise pytest.UsageError(
            "--shard with --rescore: re-score each shard's record on its own (it stays that shard)"
        )
    if rescore is not None:  # a shard's record re-scored is that shard again: merge decides
        text = rescore.settings.get("shard")
    try:
        shard = parse_shard(text) if text else None
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    if shard is not None and shard.count == 1:
        return None  # 1/1 holds every group: the whole run, which decides its own gates
    if shard is not None:
        given = [
            o
            for o in ("baseline", "max_regression", "max_slowdown")
            if config.getoption(o) is not None
        ]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise pytest.UsageError(
                f"--shard with {flag}: a shard decides nothing; give {flag} to "
                "`extractbench merge` of the shards' records instead"
            )
    return shard


def _gates(
    config: pytest.Config,
    settings: Settings,
    options: Mapping[str, SuiteOptions],
    registry: Registry,
) -> GateSet:
    given: str = config.getoption("baseline") or ""
    baseline = _read(given, "--baseline") if given else None
    if baseline is not None and not config.getoption("allow_incomparable_baseline"):
        now = Protocol.of_run({name: s.version for name, s in registry.suites.items()}, options)
        types = {name: type(value) for name, value in options.items()}
        if changes := incomparable(now, Protocol.of_record(baseline), types):
            raise pytest.UsageError(incomparable_line(f"--baseline {given}", changes))
    max_regression = config.getoption("max_regression")
    if max_regression is not None and (
        not math.isfinite(max_regression) or max_regression < 0 or baseline is None
    ):
        raise pytest.UsageError(
            f"--max-regression {max_regression}: needs --baseline and a finite value >= 0"
        )
    allow_partial = bool(config.getoption("allow_partial_baseline"))
    if baseline is not None and (
        why := partial_baseline(baseline, given, max_regression, allow_partial)
    ):
        raise pytest.UsageError(why)
    return GateSet(
        tuple(settings.gates), baseline, None, max_regression,
        bool(config.getoption("allow_incomparable_baseline")), allow_partial,
        _max_slowdown(config, baseline is not None),
    )  # fmt: skip


def _max_slowdown(config: pytest.Config, has_baseline: bool) -> float | None:
    try:
        return check_max_slowdown(config.getoption("max_slowdown"), has_baseline)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def _progress(config: pytest.Config) -> float:
    seconds = cast(float, config.getoption("progress"))  # type=float, default 60
    if not math.isfinite(seconds) or seconds < 0:
        raise pytest.UsageError(f"--progress {seconds}: must be a number of seconds >= 0")
    return seconds


def run_config(
    config: pytest.Config, registry: Registry, taken: Mapping[str, str | None]
) -> RunConfig:
    """Parse every extractbench option and setting of ``config`` once.

    Args:
        config: the pytest config.
        registry: the suites this run knows.
        taken: the report paths this plugin writes instead of pytest's own writers
            (``junit``: ``--junitxml``, ``html``: ``--html``).

    Raises:
        pytest.UsageError: any option or setting that cannot work (one line each).
    """
    limit = config.getoption("limit")
    if limit is not None and limit < 1:
        raise pytest.UsageError(f"--limit {limit}: must be at least 1")
    rescore_path = config.getoption("rescore")
    rescore = _read(rescore_path, "--rescore") if rescore_path else None
    if rescore is not None and not any(it.calls for it in rescore.items):
        raise pytest.UsageError(
            f"--rescore {rescore_path}: the record logs no generations (written by an "
            "extractbench without call logs); rerun the suite instead"
        )
    shard = _shard(config, rescore)  # before --baseline is read: a shard decides nothing
    settings, typed = _settings(config, registry)
    run_id = new_run_id()
    return RunConfig(
        run_id=run_id,
        started=time.time(),
        started_at=datetime.now(UTC).isoformat(timespec="seconds"),
        registry=registry,
        models=_rescore_models(config, rescore_path, rescore),
        settings=settings,
        suite_options=typed,
        gates=_gates(config, settings, typed, registry),
        limit=limit,
        full=bool(config.getoption("full")),
        shard=shard,
        rescore=rescore,
        rescore_path=rescore_path,
        allow_subset=bool(config.getoption("allow_subset")),
        allow_changed_data=bool(config.getoption("allow_changed_data")),
        skip_missing_data=bool(config.getoption("skip_missing_data")),
        data_dir=config.getoption("data_dir"),
        offline=bool(config.getoption("offline")),
        mirror=config.getoption("mirror"),
        targets=output_targets(config, run_id, rescore_path, taken),
        argv=tuple(config.invocation_params.args),
        ctrf_run_id=config.getoption("ctrf_run_id") or ci_run_id(),
        progress_s=_progress(config),
        order_seed=config.getoption("order_seed"),
    )


# The model options that choose which model answers, or how: with --rescore the record's
# generations answer, so any of them would be silently ignored
_ANSWERING = (
    "model", "judge_model", "judge_backend", "judge_base_urls", "seed", "chat",
    "serve", "serve_ctx", "system_prompt",
)  # fmt: skip


def _rescore_models(
    config: pytest.Config, rescore_path: str | None, rescore: RunRecord | None
) -> ModelOptions:
    """:func:`model_options`, and with ``--rescore`` the refusal of every option that
    chooses another model or another way of answering (also from ``PYTEST_ADDOPTS``): a
    re-score answers every item from the record's generations, so a ``--model`` given with
    it would name a candidate that never runs. ``--backend`` naming the record's own
    backend is allowed.

    Raises:
        pytest.UsageError: one line naming the option, the record and the fix.
    """
    models = model_options(config, rescore is not None)
    if rescore is None:
        return models
    default = ModelOptions()
    recorded = str(rescore.model.get("backend", ""))
    given = [
        (option_flag(name), value)
        for name, value in given_backend_options(config, installed_backends()).items()
    ]
    for name in _ANSWERING:
        value = getattr(models, name)
        if value != getattr(default, name):
            shown = " ".join(map(str, value)) if isinstance(value, tuple) else value
            given.insert(0, (option_flag(name.removesuffix("s")), shown))
    if models.backend != default.backend and models.backend != recorded.partition(" ")[0]:
        given.insert(0, ("--backend", models.backend))
    if given:
        flag, value = given[0]
        shown = flag if value is True else f"{flag} {value}"
        model = rescore.model.get("name") or recorded or "its model"
        raise pytest.UsageError(
            f"--rescore {rescore_path} with {shown}: a re-score answers every item from the "
            f"record's generations ({model}), so {flag} would change nothing; run without "
            f"--rescore to measure another model or setting"
        )
    return models


def model_options(config: pytest.Config, replay: bool) -> ModelOptions:
    """The model options of this run, from pytest's options, checked.

    Args:
        config: pytest's config (its parsed options).
        replay: ``--rescore``: generations come from a run record.

    Raises:
        pytest.UsageError: a value or combination that cannot work (one line).
    """
    get = cast("Callable[[str], Any]", config.getoption)  # pytest types it Any | None
    _check_concurrency(get("concurrency"), get("backend"), bool(get("serve")))
    try:
        return ModelOptions(
            backend=get("backend"), model=get("model"), judge_model=get("judge_model"),
            judge_backend=get("judge_backend"),
            judge_base_urls=tuple(dict.fromkeys(get("judge_base_url") or ())),
            seed=get("seed"), threads=get("threads"), chat=get("chat"),
            concurrency=get("concurrency"),
            serve=get("serve"), serve_ctx=get("serve_ctx"), cache_dir=get("cache_dir"),
            no_cache=get("no_cache"), replay=replay,
            system_prompt=get("system_prompt"),  # chat and instruct models
            **_backend_options(config),
        )  # fmt: skip
    except ModelOptionError as exc:
        raise pytest.UsageError(str(exc)) from None


def _check_concurrency(concurrency: int, backend: str, serve: bool) -> None:
    """``--concurrency N > 1`` keeps requests in flight to a server: a remote backend's or
    ``--serve``'s; an in-process backend runs one request at a time (a usage error)."""
    if concurrency > 1 and not serve and not backend_kind(backend).remote:
        remote = " or ".join(
            f"--backend {k.name}" for k in installed_backends().values() if k.remote
        )
        raise pytest.UsageError(
            f"--concurrency {concurrency}: for requests to a server ({remote} or --serve); "
            "an in-process backend runs one request at a time"
        )


def _backend_options(config: pytest.Config) -> dict[str, Any]:
    """The options of the backend that answers the run (``--serve``: the serving
    backend's, without what the server decides, and the served backend's options the
    server takes: :func:`_served`), of the judge's backend, and ``--gpus``, each
    parsed once (:mod:`fixtures.models.backend_options`). An option neither backend reads
    (a field of another backend's options; ``--gpus``: ``BackendKind.gpu_devices`` of an
    in-process backend) is a usage error: it would change nothing."""
    get = cast("Callable[[str], Any]", config.getoption)  # pytest types it Any | None
    kinds = installed_backends()
    given = given_backend_options(config, kinds)
    if get("gpus") is not None:
        given["gpus"] = get("gpus")
    model = backend_kind(get("backend"))
    serve = bool(get("serve"))
    answers = backend_kind(model.served_by) if serve and model.served_by else model
    judge = None
    if get("judge_model") or get("judge_base_url"):
        judge = backend_kind(get("judge_backend") or answers.default_judge)
    reads = _fields(answers, serve) | (_fields(judge, True) if judge is not None else set())
    served = set[str](_served(model)) if serve else set[str]()
    reads |= served
    if model.gpu_devices is not None and not serve:
        reads.add("gpus")
    wrong = [n for n in given if n not in reads]
    if wrong and not get("rescore"):
        _refuse(wrong[0], given[wrong[0]], kinds, get("backend"), serve)
    try:
        options = parse_backend_options(answers.options, _pick(given, _fields(answers, serve)))
        judged = None
        if judge is not None:
            own = _pick(given, _fields(judge, True))
            if judge.remote:
                urls, name = judge.remote_fields
                own |= {urls: get("judge_base_url") or (), name: get("judge_model")}
            judged = parse_backend_options(judge.options, own)
        gpus = parse_gpus(given.get("gpus"))
        serving = parse_backend_options(model.options, _pick(given, served)) if serve else None
    except SettingsError as exc:
        raise pytest.UsageError(str(exc)) from None
    return dict(backend_options=options, judge_options=judged, gpus=gpus, serve_options=serving)


def _served(kind: BackendKind) -> tuple[str, ...]:
    """The fields of ``kind``'s options a ``--serve`` server takes (its
    ``ServeSupport.options``; none for a backend ``--serve`` does not serve)."""
    return kind.serve.options if kind.serve is not None else ()


def _fields(kind: BackendKind, remote_set_elsewhere: bool) -> set[str]:
    """The option names ``kind`` reads, less its ``remote_fields`` (a remote backend's
    server named elsewhere: a judge's, ``--serve``'s)."""
    names = set(kind.options.model_fields)
    return names - set(kind.remote_fields) if kind.remote and remote_set_elsewhere else names


def _pick(given: Mapping[str, Any], names: set[str]) -> dict[str, Any]:
    return {n: v for n, v in given.items() if n in names}


def _refuse(
    name: str, value: Any, kinds: Mapping[str, BackendKind], backend: str, serve: bool
) -> None:
    owners = backend_option_owners(kinds.values()).get(name) or tuple(
        k.name for k in kinds.values() if k.gpu_devices
    )
    where = " in process" if all(kinds[o].in_process for o in owners) else ""
    used = "--serve" if serve else f"--backend {backend}"
    takes = [option_flag(f) for f in _served(kinds[backend])] if serve and where else []
    raise pytest.UsageError(
        f"{option_flag(name)} {value}: applies to --backend {' or '.join(owners)}{where}, "
        f"not {used}"
        + (f"; --serve takes {', '.join(takes[:-1])} and {takes[-1]}" if len(takes) > 1
           else f"; --serve takes {takes[0]}" if takes else "")
    )  # fmt: skip


def given_backend_options(
    config: pytest.Config, kinds: Mapping[str, BackendKind]
) -> dict[str, Any]:
    """Field name -> text of every backend option given on the command line (one that is
    not given is None: :func:`plugins.run.command_line.add_hardware_options`)."""
    names = backend_option_owners(kinds.values())
    return {n: config.getoption(n) for n in names if config.getoption(n, None) is not None}
