"""End-of-run hooks of the aggregating process, and the outputs it writes.

The xdist controller (or the single process without xdist) receives every item's record
inside its test report, and at the end builds the run record, adds gate and regression
verdicts as test cases (so JUnit and pytest-html show them), sets the exit status, and
writes the run record, plots, suite reports and the markdown summary. Workers only hand
their suite facts to the controller.
"""

from __future__ import annotations

import importlib
import platform
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
from _pytest.reports import TestReport

from fixtures.plugin import DATA_DIR_KEY, JUDGE_SPEC_KEY, MODEL_SPEC_KEY, REPLAY_KEY
from plugins.evaluation import evaluate
from plugins.grouping import GroupingLost, ungrouped_items
from plugins.html_report import item_details, scores_cell, summary_html
from plugins.markdown import summary_markdown
from plugins.plots import metric_plots
from plugins.runrecord import SCHEMA_VERSION, write_record
from plugins.state import RunState
from plugins.terminal import score_table

__all__ = [
    "Controller",
    "Worker",
    "WORKER_OUTPUT_KEY",
    "build_record",
    "verdict_reports",
    "suite_reports",
]

WORKER_OUTPUT_KEY = "extractbench_suites"


def verdict_reports(
    kind: str, name: str, passed: bool, message: str, props: list[tuple[str, object]]
) -> list[TestReport]:
    """A call and a teardown report for a synthetic test case ``<kind>::<name>``.

    Fed through ``pytest_runtest_logreport`` they appear as test cases in the terminal
    summary, in ``--junitxml`` (classname ``kind``, name ``name``, ``props`` as properties)
    and in pytest-html, and a failing one counts as a failed test.
    """
    nodeid = f"{kind}::{name}"
    common: dict[str, Any] = dict(
        nodeid=nodeid, location=(kind, None, nodeid), keywords={}, user_properties=props
    )
    return [
        TestReport(
            outcome="passed" if passed else "failed",
            longrepr=None if passed else message,
            when="call",
            duration=0.0,
            **common,
        ),
        TestReport(outcome="passed", longrepr=None, when="teardown", duration=0.0, **common),
    ]


def _run_settings(config: pytest.Config, state: RunState) -> dict[str, Any]:
    spec = config.stash[MODEL_SPEC_KEY]
    data_dir = config.stash[DATA_DIR_KEY]
    numprocesses = getattr(config.option, "numprocesses", None)
    return {
        "argv": list(config.invocation_params.args),
        "backend": spec.backend,
        "seed": spec.seed,
        "n_threads": spec.n_threads,
        "workers": numprocesses or 0,
        "dist": getattr(config.option, "dist", "no"),
        "limit": config.getoption("limit"),
        "full": config.getoption("full"),
        "data_dir": str(data_dir) if data_dir else None,
        "gates": [g.expression for g in state.settings.gates],
        "suite_options": state.settings.suite_options,
        "python": platform.python_version(),
        "pytest": pytest.__version__,
        "platform": platform.platform(),
    }


def build_record(config: pytest.Config, state: RunState, exitstatus: int) -> dict[str, Any]:
    """The run record of the items finished so far (a JSON-safe dict)."""
    items = [state.items[key] for key in sorted(state.items)]
    expected = sum(info.get("items_selected", 0) for info in state.suites.values())
    if not state.suites:  # -n, interrupted before any worker handed its suites over
        expected = state.collected
    spec = config.stash[MODEL_SPEC_KEY]
    replay = config.stash.get(REPLAY_KEY, None)
    judge: dict[str, Any] | None = None
    if replay is not None:  # --rescore: the generations are the recorded model's
        model, judge = replay["model"], replay.get("judge")
    else:
        try:
            model = spec.describe()
            judge_spec = config.stash.get(JUDGE_SPEC_KEY, None)
            judge = judge_spec.describe() if judge_spec is not None else None
        except OSError as exc:
            model = {"backend": spec.backend, "path": str(spec.path), "error": str(exc)}
    scored = sum(1 for it in items if it.get("outcome") == "passed")
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "run_id": state.run_id,
        "started_at": state.started_at,
        "duration_s": round(time.time() - state.started, 3),
        "complete": exitstatus != pytest.ExitCode.INTERRUPTED and len(items) >= expected,
        "exit_status": int(exitstatus),
        "model": model,
        "settings": _run_settings(config, state),
        "suites": state.suites,
        "counts": {
            "items": len(items),
            "expected": expected,
            "scored": scored,
            "failed": len(items) - scored,
            "calls": sum(len(it.get("calls", [])) for it in items),
            "cached_calls": sum(
                c.get("cached", False) for it in items for c in it.get("calls", [])
            ),
        },
        "items": items,
    }
    if judge is not None:
        record["judge"] = judge
    if replay is not None:
        record["rescore_of"] = {
            "run_id": replay.get("run_id", ""),
            "path": config.getoption("rescore"),
        }
    max_regression = config.getoption("max_regression")
    record.update(
        evaluate(items, state.suites, state.settings.gates, state.baseline, max_regression)
    )
    return record


def suite_reports(record: dict[str, Any], report_path: Path) -> tuple[list[str], list[Path]]:
    """Run each suite's report module (``report=`` in its marker) on the record.

    A report module has ``summary_lines(record, suite) -> list[str]`` and
    ``write_artifacts(record, suite, folder, stem) -> list[Path]``; files go next to the
    run record and are listed under ``suites.<name>.artifacts``. A failing report module
    costs only its own output, with one line saying why.
    """
    lines: list[str] = []
    paths: list[Path] = []
    for name, info in sorted(record["suites"].items()):
        module_name = info.get("report")
        if not module_name:
            continue
        try:
            module = importlib.import_module(module_name)
            lines += module.summary_lines(record, name)
            written = module.write_artifacts(record, name, report_path.parent, report_path.stem)
            info["artifacts"] = [str(p) for p in written]
            paths += written
        except Exception as exc:  # a report must never lose the run record
            lines.append(f"{name}: report {module_name} failed: {type(exc).__name__}: {exc}")
    return lines, paths


def _junit_suite_properties(config: pytest.Config, record: dict[str, Any]) -> None:
    """Model identity and aggregate means as ``<testsuite>`` properties of ``--junitxml``."""
    from _pytest.junitxml import xml_key

    xml = config.stash.get(xml_key, None)
    if xml is None:
        return
    model = record["model"]
    xml.add_global_property("extractbench.run_id", record["run_id"])
    for key in ("name", "backend", "sha256"):
        xml.add_global_property(f"extractbench.model.{key}", str(model.get(key, "")))
    for key, agg in record["aggregates"].items():
        xml.add_global_property(key, f"{agg['mean']:.6f}")
        xml.add_global_property(f"{key}.ci95", f"[{agg['ci_low']:.6f}, {agg['ci_high']:.6f}]")
        xml.add_global_property(f"{key}.n", str(agg["n"]))


def summary_lines(record: dict[str, Any], state: RunState) -> list[str]:
    """The terminal summary: model, counts, score table, suite reports, verdicts, files."""
    model = record["model"]
    counts = record["counts"]
    lines = [
        f"model: {model.get('name', '?')} ({model.get('backend')}) sha256 {str(model.get('sha256', ''))[:12]}",
        f"items: {counts['scored']} scored, {counts['failed']} failed, of {counts['expected']} selected"
        + ("" if record["complete"] else "  [INCOMPLETE RUN]"),
        f"model calls: {counts.get('calls', 0)}, {counts.get('cached_calls', 0)} answered from the "
        + ("run record (--rescore)" if record.get("rescore_of") else "generation cache"),
    ]
    for name, info in sorted(record["suites"].items()):
        limit = info.get("limit")
        if limit:
            lines.append(
                f"{name}: {info['items_selected']} of {info['items_total']} items ({limit['source']} {limit['value']})"
            )
        for note_key, note in sorted(info.get("notes", {}).items()):
            if note_key.startswith("warning"):
                lines.append(f"{name}: {note}")
    lines += score_table(record["aggregates"], record["gates"])
    lines += state.extra_lines
    for c in record.get("baseline", {}).get("comparisons", []):
        if c["delta"] is not None:
            lines.append(
                f"baseline {c['metric']}: {c['baseline']:.4f} -> {c['current']:.4f}, paired delta {c['delta']:+.4f} "
                f"[{c['ci_low']:+.4f}, {c['ci_high']:+.4f}] over {c['n_shared']} shared items: {c['verdict']}"
                + ("  REGRESSION GATE FAILED" if c["failed"] else "")
            )
        else:
            lines.append(
                f"baseline {c['metric']}: not comparable (no shared items; {c['only_current']} here, {c['only_baseline']} in baseline)"
            )
    for gate in record["gates"]:
        if gate["passed"] is False:
            lines.append(f"GATE FAILED  {gate['expression']}: {gate['reason']}")
    if state.written:
        lines.append(f"run record: {state.written}")
    if state.write_error:
        lines.append(state.write_error)
    return lines


class Controller:
    """Hooks of the process that aggregates: the xdist controller, or the only process."""

    def __init__(self, config: pytest.Config, state: RunState) -> None:
        self.config = config
        self.state = state

    def pytest_runtest_logreport(self, report: TestReport) -> None:
        entry = getattr(report, "extractbench_item", None)
        if entry is not None and (entry["id"] not in self.state.items or report.failed):
            self.state.items[entry["id"]] = entry

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.state.collected = len(ids)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", {}) or {}
        for name, info in output.get(WORKER_OUTPUT_KEY, {}).items():
            self.state.suites.setdefault(name, info)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config, state = self.config, self.state
        if config.option.collectonly:
            return
        interrupted = session.exitstatus == pytest.ExitCode.INTERRUPTED
        if not (state.items or state.suites or config.getoption("gate") or interrupted):
            return  # not a benchmark run (e.g. the harness's own tests)
        record = build_record(config, state, session.exitstatus)
        if interrupted:
            for gate in record["gates"]:  # a partial run decides nothing
                gate.update(
                    passed=None, reason=f"not evaluated: run interrupted ({gate['reason']})"
                )
        failed = False
        for gate in record["gates"]:
            if gate["passed"] is not None:
                failed |= not gate["passed"]
                props = [
                    ("expression", gate["expression"]),
                    ("value", "" if gate["value"] is None else gate["value"]),
                ]
                for report in verdict_reports(
                    "gate",
                    gate["metric"],
                    gate["passed"],
                    f"gate {gate['expression']} failed: {gate['reason']}",
                    props,
                ):
                    config.hook.pytest_runtest_logreport(report=report)
        for c in record.get("baseline", {}).get("comparisons", []):
            if c["delta"] is None:
                continue
            failed |= c["failed"]
            message = (
                f"regression {c['metric']}: paired delta {c['delta']:+.4f} [{c['ci_low']:+.4f}, {c['ci_high']:+.4f}] "
                f"exceeds --max-regression {record['baseline']['max_regression']}"
            )
            props = [
                ("delta", c["delta"]),
                ("ci_low", c["ci_low"]),
                ("ci_high", c["ci_high"]),
                ("n_shared", c["n_shared"]),
            ]
            for report in verdict_reports(
                "regression", c["metric"], not c["failed"], message, props
            ):
                config.hook.pytest_runtest_logreport(report=report)
        if failed and session.exitstatus in (
            pytest.ExitCode.OK,
            pytest.ExitCode.NO_TESTS_COLLECTED,
        ):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        record["exit_status"] = int(session.exitstatus)
        state.record = record
        self._write_outputs(record)
        _junit_suite_properties(config, record)

    def _write_outputs(self, record: dict[str, Any]) -> None:
        state = self.state
        folder, stem = state.report_path.parent, state.report_path.stem
        try:
            state.extra_lines, suite_files = suite_reports(record, state.report_path)
            try:
                plots = metric_plots(record, folder, stem)
            except Exception as exc:  # a plot must never lose the run record
                plots = []
                state.extra_lines.append(f"plots failed: {type(exc).__name__}: {exc}")
            state.artifacts = plots + suite_files
            record["artifacts"] = [str(p) for p in state.artifacts]
            state.written = write_record(record, state.report_path)
        except OSError as exc:
            state.write_error = f"cannot write run record {state.report_path}: {exc}"
            return
        md_path = self.config.getoption("summary_md")
        if md_path:
            path = Path(md_path)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                summary_markdown(record, state.artifacts, path.parent.resolve(), state.extra_lines),
                encoding="utf-8",
            )

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        record = self.state.record
        if record is not None:
            terminalreporter.write_sep("=", "extractbench scores")
            for line in summary_lines(record, self.state):
                terminalreporter.write_line(line)

    # ------------------------------------------------------------ pytest-html

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: Any
    ) -> None:
        record = self.state.record
        if record is not None:
            prefix.append(summary_html(record, self.state.artifacts, self.state.extra_lines))

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        cells.insert(2, '<th class="sortable" data-column-type="scores">Scores</th>')

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_row(self, report: TestReport, cells: list[str]) -> None:
        entry = getattr(report, "extractbench_item", None)
        cells.insert(2, scores_cell(entry) if entry else '<td class="col-scores"></td>')

    @pytest.hookimpl(optionalhook=True)
    def pytest_html_results_table_html(self, report: TestReport, data: list[str]) -> None:
        entry = getattr(report, "extractbench_item", None)
        if entry:
            data.insert(0, item_details(entry))


class Worker:
    """Hooks of an xdist worker: hand suite facts to the controller."""

    def __init__(self, config: pytest.Config, state: RunState) -> None:
        self.config = config
        self.state = state

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Warn (the warning travels to the controller's summary) when ``--dist loadgroup``
        is on but the items' groups did not take effect."""
        if not getattr(self.config.option, "loadgroup", False):
            return
        missing = ungrouped_items(session.items)
        if missing:
            warnings.warn(
                GroupingLost(
                    f"--dist loadgroup is not grouping ({len(missing)} items, e.g. "
                    f"{missing[0]}): pytest-xdist#1386 with pytest {pytest.__version__}; "
                    "groups run split across workers and shared prompt prefixes are "
                    'recomputed; install "pytest<9.2"'
                ),
                stacklevel=1,
            )

    def pytest_sessionfinish(self) -> None:
        self.config.workeroutput[WORKER_OUTPUT_KEY] = self.state.suites  # type: ignore[attr-defined]
