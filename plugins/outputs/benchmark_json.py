"""The run's speed in pytest-benchmark's session, so ``--benchmark-json`` (and
``--benchmark-autosave``) write it in pytest-benchmark's format and
``pytest-benchmark compare`` reads it.

pytest-benchmark keeps its session on ``config._benchmarksession`` (the way its own
``benchmark`` fixture reaches it) and saves it in its ``pytest_sessionfinish`` wrapper,
before any plain ``pytest_sessionfinish`` hook runs; :class:`SpeedFeed` wraps that hook
from outside (``tryfirst``) and adds one benchmark per suite first, when the session will
write a file (``--benchmark-json``, ``--benchmark-save``, ``--benchmark-autosave``). Only
the process that writes the run's outputs registers it (xdist's controller, or the single
process).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Mapping
from types import SimpleNamespace
from typing import Any

import pytest

from extractbench.plugins.verdict.speed import speed_stats

__all__ = ["SpeedFeed", "speed_benchmarks"]


def speed_benchmarks(items: Iterable[Mapping[str, Any]], options: Mapping[str, Any]) -> list[Any]:
    """One pytest-benchmark ``Metadata`` per suite: its rounds are the latencies (seconds)
    of the model calls answered in this run, one round each, so ``stats`` (min, median,
    mean, max, ops = calls/s of one process) describe a model call; ``extra_info`` holds
    the suite's :class:`plugins.record.values.SpeedStats`. A suite without such a call
    (all cached) gets none.

    Args:
        items: item records with ``suite`` and ``calls`` (the run record's items).
        options: the benchmark session's options (kept in the JSON's ``options``).
    """
    from pytest_benchmark.stats import Metadata

    items = list(items)
    speed = speed_stats(items)
    out = []
    for suite, stats in speed.items():
        latencies = [
            float(c.get("latency_s") or 0.0)
            for it in items if it["suite"] == suite
            for c in it.get("calls") or [] if not c.get("cached", False)
        ]  # fmt: skip
        if not latencies or sum(latencies) <= 0:
            continue
        fixture = SimpleNamespace(
            name=f"extractbench[{suite}]", fullname=f"extractbench::{suite}::model_call",
            group="extractbench", param=suite, params={"suite": suite},
            extra_info=stats.model_dump(), cprofile_stats=None, has_error=False,
        )  # fmt: skip
        meta = Metadata(fixture, 1, dict(options))
        for latency in latencies:
            meta.stats.update(latency)
        out.append(meta)
    return out


class SpeedFeed:
    """A pytest plugin adding the run's speed to pytest-benchmark's session (see the
    module docstring); ``items`` returns the run's item records when the session ends,
    ``note`` takes the one line saying why no file was written (no model call was timed:
    every answer came from the cache), which pytest-benchmark itself would not say."""

    def __init__(
        self, items: Callable[[], Iterable[Mapping[str, Any]]], note: Callable[[str], None]
    ) -> None:
        self.items = items
        self.note = note

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> Generator[None, None, None]:
        bench = getattr(session.config, "_benchmarksession", None)
        writes = any(getattr(bench, name, None) for name in ("json", "save", "autosave"))
        if bench is not None and writes and not session.config.option.collectonly:
            found = speed_benchmarks(self.items(), getattr(bench, "options", {}))
            bench.benchmarks.extend(found)
            if not bench.benchmarks:
                where = f"--benchmark-json {bench.json}" if bench.json else "--benchmark-save"
                self.note(
                    f"{where}: not written: no model call of this run was timed (every "
                    "answer came from the generation cache or a record); run with "
                    "--no-cache to measure the speed"
                )
        return (yield)
