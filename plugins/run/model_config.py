"""The model options of a run parsed once (``pytest`` options to
:class:`fixtures.models.model_options.ModelOptions`), the GPU and batching settings included."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from extractbench.fixtures.models.backend_options import (
    backend_option_owners,
    option_flag,
    parse_backend_options,
)
from extractbench.fixtures.models.gpus import parse_gpus
from extractbench.fixtures.models.model_options import ModelOptionError, ModelOptions
from extractbench.fixtures.models.registry import BackendKind, backend_kind, installed_backends
from extractbench.suites.model import SettingsError

__all__ = ["model_options", "given_backend_options"]


def model_options(config: pytest.Config, replay: bool) -> ModelOptions:
    """The model options of this run, from pytest's options, checked.

    Args:
        config: pytest's config (its parsed options).
        replay: ``--rescore``: generations come from a run record.

    Raises:
        pytest.UsageError: a value or combination that cannot work (one line).
    """
    get = config.getoption
    _check_concurrency(get("concurrency"), get("backend"), bool(get("serve")))
    try:
        return ModelOptions(
            backend=get("backend"), model=get("model"), judge_model=get("judge_model"),
            judge_backend=get("judge_backend"),
            judge_base_urls=tuple(dict.fromkeys(get("judge_base_url") or ())),
            seed=get("seed"), threads=get("threads"), chat=get("chat"),
            concurrency=get("concurrency"), weight_repack=get("weight_repack"),
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
    server takes: :data:`SERVED_FIELDS`), of the judge's backend, and ``--gpus``, each
    parsed once (:mod:`fixtures.models.backend_options`). An option neither backend reads
    (a field of another backend's options; ``--gpus``: ``BackendKind.gpu_devices`` of an
    in-process backend) is a usage error: it would change nothing."""
    get, kinds = config.getoption, installed_backends()
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
    served = set(SERVED_FIELDS) & set(model.options.model_fields) if serve else set()
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


# The served model's own options a --serve server takes (llama-server's -ngl and -fa)
SERVED_FIELDS = ("n_gpu_layers", "flash_attn")


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
    raise pytest.UsageError(
        f"{option_flag(name)} {value}: applies to --backend {' or '.join(owners)}{where}, "
        f"not {used}"
        + ("; --serve takes " + " and ".join(option_flag(f) for f in SERVED_FIELDS)
           if serve and where else "")
    )  # fmt: skip


def given_backend_options(
    config: pytest.Config, kinds: Mapping[str, BackendKind]
) -> dict[str, Any]:
    """Field name -> text of every backend option given on the command line (one that is
    not given is None: :func:`plugins.run.model_command_line.add_hardware_options`)."""
    names = backend_option_owners(kinds.values())
    return {n: config.getoption(n) for n in names if config.getoption(n, None) is not None}
