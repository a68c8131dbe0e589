"""Every command-line option of extractbench, in one group (``pytest --help``).

One function adds them all, so the model/data options and the scoring/report options are
one "extractbench" section, and an option is defined once whichever module reads it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import pytest
from extractbench.plugins.outputs.formats import export_choices
from extractbench.plugins.run.model_command_line import add_model_options
from extractbench.plugins.run.supervisor import CRASH_GUARD_MODES

__all__ = ["add_options"]


def add_options(parser: pytest.Parser, backends: Sequence[str]) -> pytest.OptionGroup:
    """Add extractbench's options to pytest's parser (called from ``pytest_addoption``);
    return the group, where the suites add their own (``Suite.add_options``) and the
    backends theirs (:func:`plugins.run.model_command_line.add_hardware_options`).

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
        "left (the record says subset). Without it such a run decides no gate of those "
        "suites and is INCOMPLETE (exit 1): a release gate never passes on part of a suite. "
        "--limit and suite paths are not subsets.",
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
        help="run each gated suite's items in a random order fixed by --seed and stop the "
        "suite once an anytime-valid 95%% confidence sequence of every gated mean lies "
        "wholly on one side of its threshold (items left: 'not run: decided early'); a "
        "suite that is never decided early runs every item and is decided on its mean. "
        "Default: [tool.extractbench] stop_when_decided (false). Not with --shard.",
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
        "reported as not comparable instead of failing the run (exit 1).",
    )
    group.addoption(
        "--allow-partial-baseline",
        action="store_true",
        help="with --baseline and --max-regression: a selected suite of which the baseline "
        "shares no scored item is reported as not comparable instead of failing the run "
        "(exit 1).",
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
        "--summary-md",
        metavar="PATH",
        default=None,
        help="also write a compact markdown summary (tables, verdicts, plot links), e.g. "
        "for $GITHUB_STEP_SUMMARY.",
    )
    group.addoption(
        "--report-plots",
        choices=("on", "off"),
        default="on",
        help="on (default): draw the plots of the run's metrics (PNG beside the record, "
        "embedded in the HTML); off: draw none (matplotlib takes a few seconds a run); the "
        "suites' own files (Table-QA heatmaps, MINEA's criteria) are written either way.",
    )
    group.addoption(
        "--report-json",
        metavar="PATH",
        default=None,
        help="where to write the JSON run record (default reports/<run-id>.json under rootdir).",
    )
    _export_options(group)
    return group


def _export_options(group: pytest.OptionGroup) -> None:
    """The exports, the CI's step summary and the progress lines (docs/reports.md)."""
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
        "--ctrf",
        metavar="PATH",
        default=None,
        help="also write a CTRF JSON report (Common Test Report Format: one test per item, "
        "gate and regression check); its runId is shared by the shards of one CI run.",
    )
    group.addoption(
        "--ctrf-run-id",
        metavar="ID",
        default=None,
        help="the CTRF runId of this run, shared by its shards and kept by `extractbench "
        "merge` (default: the CI's pipeline run: GITHUB_RUN_ID, CI_PIPELINE_ID or BUILD_TAG; "
        "else the run id).",
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
