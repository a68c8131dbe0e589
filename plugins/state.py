"""Per-run state shared by the hook modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fixtures.models import ModelSpec
from fixtures.models.serve import LocalServer
from plugins.settings import Settings
from suites.item import SuiteData
from suites.registry import Registry

__all__ = ["RunState", "STATE_KEY", "USAGE_PREFIX"]  # and the stash keys below

# Collection errors with this prefix are usage errors the controller reports (exit 4).
USAGE_PREFIX = "extractbench usage error: "


@dataclass
class RunState:
    """Per-run state of this process (one per pytest config)."""

    run_id: str
    started: float
    started_at: str
    settings: Settings
    report_path: Path
    controller: bool
    options: dict[str, Any] = field(default_factory=dict)  # suite -> its parsed Options
    loaded: dict[str, SuiteData] = field(default_factory=dict)
    suites: dict[str, dict[str, Any]] = field(default_factory=dict)
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    collected: int = 0  # items a worker collected (xdist controller; before suites arrive)
    baseline: dict[str, Any] | None = None
    registry: Registry = field(default_factory=Registry)
    selected: list[str] = field(default_factory=list)  # suites the command's paths select
    excluded: set[str] = field(default_factory=set)  # suites a --rescore record lacks
    skipped: dict[str, str] = field(default_factory=dict)  # --skip-missing-data: suite -> why
    sent_suites: set[str] = field(default_factory=set)  # worker: suites told to the controller
    usage_errors: list[str] = field(default_factory=list)
    crashes: list[dict[str, Any]] = field(default_factory=list)
    crashed_ids: set[str] = field(default_factory=set)
    other_failures: set[str] = field(default_factory=set)  # failed tests that are not items
    interrupted: str | None = None  # "SIGINT" or "SIGTERM"
    signal: str | None = None  # the signal our handler turned into KeyboardInterrupt
    stopped: str | None = None  # why the run was stopped early (circuit breaker, ...)
    data: dict[str, Any] = field(default_factory=dict)  # data provenance for the record
    record: dict[str, Any] | None = None
    extra_lines: list[str] = field(default_factory=list)
    artifacts: list[Path] = field(default_factory=list)
    written: Path | None = None
    output_errors: list[str] = field(default_factory=list)


STATE_KEY = pytest.StashKey[RunState]()

# The run's model, data and replay facts (set by fixtures/plugin.py's pytest_configure).
MODEL_SPEC_KEY = pytest.StashKey[ModelSpec]()
DATA_DIR_KEY = pytest.StashKey["Path | None"]()
# How the data folder was chosen (None until the controller chooses one at session start).
DATA_CHOICE_KEY = pytest.StashKey["DataChoice | None"]()
JUDGE_SPEC_KEY = pytest.StashKey[ModelSpec]()
CACHE_KEY = pytest.StashKey["GenerationCache | None"]()
SERVER_KEY = pytest.StashKey[LocalServer]()
# A run record whose logged calls answer instead of a model (``--rescore``, set by the
# extractbench plugin).
REPLAY_KEY = pytest.StashKey[dict]()
