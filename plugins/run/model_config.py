"""The model options of a run parsed once (``pytest`` options to
:class:`fixtures.models.options.ModelOptions`), the GPU and batching settings included."""

from __future__ import annotations

from typing import Any

import pytest

from fixtures.models.gpus import parse_gpus
from fixtures.models.hf_settings import parse_hf_settings
from fixtures.models.llama_gpu import DEFAULT_FLASH_ATTN, DEFAULT_N_UBATCH, parse_llama_settings
from fixtures.models.options import ModelOptionError, ModelOptions
from fixtures.models.registry import backend_kind, installed_backends
from suites.model import SettingsError

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
            system_prompt=get("system_prompt"),  # chat and instruct models (issue 29)
            **_hardware(config),  # GPU and batched inference (issue 28)
        )  # fmt: skip
    except ModelOptionError as exc:
        raise pytest.UsageError(str(exc)) from None


HARDWARE = ("--n-gpu-layers", "--main-gpu", "--flash-attn", "--n-ubatch", "--device", "--dtype",
            "--batch-size", "--prefix-reuse")  # fmt: skip


def _hardware(config: pytest.Config) -> dict[str, Any]:
    """``--n-gpu-layers`` ... ``--gpus`` parsed into the backends' settings; an option the
    run's backend does not read (``BackendKind.settings``) is a usage error: it would change
    nothing. ``--serve`` starts its server with the CPU defaults and reads none."""
    get = config.getoption
    given = {o: get(o[2:].replace("-", "_")) for o in HARDWARE}
    given = {option: value for option, value in given.items() if value is not None}
    reads = () if get("serve") else backend_kind(get("backend")).settings
    wrong = [option for option in given if option not in reads]
    if wrong and not get("rescore"):
        owner = next((k.name for k in installed_backends().values() if wrong[0] in k.settings), "?")
        used = "--serve" if get("serve") else f"--backend {get('backend')}"
        raise pytest.UsageError(
            f"{wrong[0]} {given[wrong[0]]}: applies to --backend {owner} in process, not {used}"
            + ("; for a GPU server start llama-server -ngl N yourself and pass --backend "
               "openai --base-url" if get("serve") else "")
        )  # fmt: skip
    given = {option[2:].replace("-", "_"): value for option, value in given.items()}
    try:
        llama = parse_llama_settings(
            given.get("n_gpu_layers", "auto"), given.get("main_gpu"),
            given.get("flash_attn", DEFAULT_FLASH_ATTN), given.get("n_ubatch", DEFAULT_N_UBATCH),
        )  # fmt: skip
        hf = parse_hf_settings(
            given.get("device", "auto"), given.get("dtype", "auto"),
            given.get("batch_size", "1"), given.get("prefix_reuse", "auto"),
        )  # fmt: skip
        gpus = parse_gpus(get("gpus"))
    except SettingsError as exc:
        raise pytest.UsageError(str(exc)) from None
    return {"llama": llama, "hf": hf, "gpus": gpus}
