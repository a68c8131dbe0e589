"""Per-run state shared by the hook modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fixtures.models import GenerationCache, ModelSpec
from fixtures.models.serve import LocalServer
from plugins.run.settings import Settings
from plugins.run.shard import Shard
from suites.datasets.resolve import DataChoice
from suites.item import Item, SuiteData
from suites.registry import Registry

__all__ = ["RunState", "STATE_KEY", "USAGE_PREFIX"]

# Collection errors with this prefix are usage errors the controller reports (exit 4).
USAGE_PREFIX = "extractbench usage error: "


@dataclass
class RunState:
    """Per-run state of this process (one per pytest config, owned by the extractbench
    plugin: ``config.stash[STATE_KEY]``)."""

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
    # the run's model, data and replay facts (fixtures/plugin.py: setup_models)
    model: ModelSpec | None = None
    judge: ModelSpec | None = None  # --judge-model; None: the model under test judges
    data_choice: DataChoice | None = None  # how the data folder was chosen (None: not yet)
    cache: GenerationCache | None = None
    server: LocalServer | None = None  # --serve: the server this process started
    replay: dict[str, Any] | None = None  # --rescore: the record whose calls answer
    shard: Shard | None = None  # --shard K/N
    # -n 0 under the crash guard: the supervisor's journal folder (plugins/supervisor.py)
    journal: Path | None = None
    # --concurrency: item id -> (the items it runs among in this process, in order; its index)
    run_order: dict[str, tuple[list[Item], int]] | None = None

    @property
    def data_dir(self) -> Path | None:
        """The benchmark data folder, or None when none was found."""
        return self.data_choice.folder if self.data_choice is not None else None


STATE_KEY = pytest.StashKey[RunState]()
