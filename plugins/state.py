"""Per-run state shared by the hook modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from plugins.settings import Settings
from suites.item import SuiteData

__all__ = ["RunState", "STATE_KEY"]


@dataclass
class RunState:
    """Per-run state of this process (one per pytest config)."""

    run_id: str
    started: float
    started_at: str
    settings: Settings
    report_path: Path
    controller: bool
    loaded: dict[str, SuiteData] = field(default_factory=dict)
    suites: dict[str, dict[str, Any]] = field(default_factory=dict)
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    collected: int = 0  # items a worker collected (xdist controller; before suites arrive)
    baseline: dict[str, Any] | None = None
    record: dict[str, Any] | None = None
    extra_lines: list[str] = field(default_factory=list)
    artifacts: list[Path] = field(default_factory=list)
    written: Path | None = None
    write_error: str | None = None


STATE_KEY = pytest.StashKey[RunState]()
