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
            seed=get("seed"), threads=get("threads"), base_urls=tuple(dict.fromkeys(get("base_url") or ())),
            model_name=get("model_name"), chat=get("chat"), request_timeout=get("request_timeout"),
            max_retries=get("max_retries"), max_failures=get("max_failures"),
            concurrency=get("concurrency"), routing=get("routing"), weight_repack=get("weight_repack"),
            serve=get("serve"), serve_ctx=get("serve_ctx"), cache_dir=get("cache_dir"),
            no_cache=get("no_cache"), replay=replay, model_revision=get("model_revision"),
            trust_cache=get("trust_cache"),
            system_prompt=get("system_prompt"),  # chat and instruct models
            **_hardware(config),  # GPU and batched inference
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


def _hardware(config: pytest.Config) -> dict[str, Any]:
    """The run's backend's own options (:mod:`fixtures.models.backend_options`) and
    ``--gpus``, each parsed once. An option the run's backend does not read (a field of
    another backend's options; ``--gpus``: ``BackendKind.gpu_devices``) is a usage error: it
    would change nothing. ``--serve`` starts its server with the CPU defaults and reads none."""
    get, kinds = config.getoption, installed_backends()
    given = given_backend_options(config, kinds)
    if get("gpus") is not None:
        given["gpus"] = get("gpus")
    kind = None if get("serve") else backend_kind(get("backend"))
    reads = (
        {*kind.options.model_fields, *(("gpus",) if kind.gpu_devices else ())} if kind else set()
    )
    wrong = [n for n in given if n not in reads]
    if wrong and not get("rescore"):
        owners = backend_option_owners(kinds.values()).get(wrong[0]) or [
            k.name for k in kinds.values() if k.gpu_devices
        ]
        used = "--serve" if get("serve") else f"--backend {get('backend')}"
        raise pytest.UsageError(
            f"{option_flag(wrong[0])} {given[wrong[0]]}: applies to --backend "
            f"{' or '.join(owners)} in process, not {used}"
            + ("; for a GPU server start llama-server -ngl N yourself and pass "
               "--backend openai --base-url" if get("serve") else "")
        )  # fmt: skip
    try:
        own = {
            n: v for n, v in given.items() if kind is not None and n in kind.options.model_fields
        }
        options = parse_backend_options(kind.options, own) if kind is not None else None
        gpus = parse_gpus(given.get("gpus"))
    except SettingsError as exc:
        raise pytest.UsageError(str(exc)) from None
    return dict(backend_options=options, gpus=gpus)  # ModelOptions' field names


def given_backend_options(
    config: pytest.Config, kinds: Mapping[str, BackendKind]
) -> dict[str, Any]:
    """Field name -> text of every backend option given on the command line (one that is
    not given is None: :func:`plugins.run.model_command_line.add_backend_options`)."""
    names = backend_option_owners(kinds.values())
    return {n: config.getoption(n) for n in names if config.getoption(n, None) is not None}
