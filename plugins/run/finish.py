"""The end of a live run (and of ``--rescore``): record, verdict, outputs, exit status.

The same two calls as every other path: :func:`plugins.verdict.decide` once, then
:func:`plugins.outputs.write_outputs` once. The decided gates and regression checks are
also reported to pytest's terminal as test cases (``gate::fda/accuracy``), so its last
line counts a failed gate as a failed test.
"""

from __future__ import annotations

from typing import Any, Literal, cast

import pytest

import extractbench.plugins.outputs
import extractbench.plugins.verdict
from extractbench.fixtures.plugin import ModelSetup
from extractbench.plugins.outputs.junit import verdict_cases
from extractbench.plugins.outputs.write import Written
from extractbench.plugins.run.config import RunConfig
from extractbench.plugins.run.run_record import build_record
from extractbench.plugins.run.state import RunState, SuiteFacts

__all__ = ["finish_run", "is_benchmark_run"]


def is_benchmark_run(config: pytest.Config, state: RunState) -> bool:
    """Whether this pytest run ran (or tried to run) suites: not the harness's own tests."""
    return bool(state.selected or state.items or state.suites or state.usage_errors)


def _placeholders(state: RunState) -> None:
    """A selected suite whose facts never arrived (skipped, or interrupted first)."""
    for name in state.selected:
        if name in state.suites:
            continue
        note = (
            {"skipped": state.skipped[name]}
            if name in state.skipped
            else {"warning_no_facts": "the run ended before this suite's facts arrived"}
        )
        state.suites[name] = SuiteFacts(notes=note)


def _report_cases(config: pytest.Config, written: Written) -> None:
    for case in verdict_cases(written.record):
        nodeid = f"{case.classname}::{case.name}"
        longrepr: Any = None
        if case.outcome == "failed":
            longrepr = case.message
        elif case.outcome == "skipped":  # pytest's form of a skip: (path, line, reason)
            longrepr = (case.classname, None, case.message)
        common: dict[str, Any] = dict(
            nodeid=nodeid, location=(case.classname, None, nodeid), keywords={},
            duration=0.0, user_properties=list(case.properties),
        )  # fmt: skip
        outcome = cast(Literal["passed", "failed", "skipped"], case.outcome)
        for report in (
            pytest.TestReport(outcome=outcome, longrepr=longrepr, when="call", **common),
            pytest.TestReport(outcome="passed", longrepr=None, when="teardown", **common),
        ):
            config.hook.pytest_runtest_logreport(report=report)


def finish_run(
    config: pytest.Config,
    cfg: RunConfig,
    state: RunState,
    setup: ModelSetup,
    session: pytest.Session,
) -> Written:
    """Build the record, decide, write every output, report the verdict's test cases, and
    set the session's exit status; returns what was written (the terminal summary's)."""
    _placeholders(state)
    record = build_record(config, cfg, state, setup, session.exitstatus)
    verdict = extractbench.plugins.verdict.decide(record, cfg.gates, record.selection)
    written = extractbench.plugins.outputs.write_outputs(record, verdict, cfg.targets, cfg.registry)
    _report_cases(config, written)
    session.exitstatus = written.verdict.status
    return written
