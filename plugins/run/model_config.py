"""The model options of a run parsed once (``pytest`` options to
:class:`fixtures.models.model_options.ModelOptions`), the GPU and batching settings included."""

from __future__ import annotations

from typing import Any

import pytest
from extractbench.fixtures.models.gpus import parse_gpus
from extractbench.fixtures.models.hf_settings import parse_hf_settings
from extractbench.fixtures.models.llama_gpu import parse_llama_settings
from extractbench.fixtures.models.model_options import ModelOptionError, ModelOptions
from extractbench.fixtures.models.registry import backend_kind, installed_backends
from extractbench.suites.model import SettingsError

__all__ = ["model_options"]


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


LLAMA_SETTINGS = ("n_gpu_layers", "main_gpu", "flash_attn", "n_ubatch")
HF_SETTINGS = ("device", "dtype", "batch_size", "prefix_reuse")


def _hardware(config: pytest.Config) -> dict[str, Any]:
    """``--n-gpu-layers`` ... ``--gpus`` parsed into the backends' settings (an option not
    given keeps its parser's default). An option the run's backend does not read
    (``BackendKind.settings``; ``--gpus``: ``BackendKind.gpu_devices``) is a usage error: it
    would change nothing. ``--serve`` starts its server with the CPU defaults and reads none."""
    get = config.getoption
    given = {n: get(n) for n in (*LLAMA_SETTINGS, *HF_SETTINGS, "gpus") if get(n) is not None}
    kind = None if get("serve") else backend_kind(get("backend"))
    reads = {*kind.settings, *(("--gpus",) if kind.gpu_devices else ())} if kind else set()
    wrong = [n for n in given if "--" + n.replace("_", "-") not in reads]
    if wrong and not get("rescore"):
        flag = "--" + wrong[0].replace("_", "-")
        owners = [k.name for k in installed_backends().values()
                  if flag in k.settings or (flag == "--gpus" and k.gpu_devices)]  # fmt: skip
        used = "--serve" if get("serve") else f"--backend {get('backend')}"
        raise pytest.UsageError(
            f"{flag} {given[wrong[0]]}: applies to --backend {' or '.join(owners)} in process, "
            f"not {used}" + ("; for a GPU server start llama-server -ngl N yourself and pass "
                             "--backend openai --base-url" if get("serve") else "")
        )  # fmt: skip
    try:
        llama = parse_llama_settings(**{n: given[n] for n in LLAMA_SETTINGS if n in given})
        hf = parse_hf_settings(**{n: given[n] for n in HF_SETTINGS if n in given})
        gpus = parse_gpus(given.get("gpus"))
    except SettingsError as exc:
        raise pytest.UsageError(str(exc)) from None
    return dict(llama=llama, hf=hf, gpus=gpus)  # ModelOptions' field names
