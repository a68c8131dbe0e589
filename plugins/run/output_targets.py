"""The run's output paths, checked together before anything runs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from extractbench.plugins.outputs.ctrf import ci_run_id
from extractbench.plugins.outputs.exports import ExportError, parse_exports
from extractbench.plugins.outputs.paths import path_problems
from extractbench.plugins.outputs.step_summary import step_summary_target
from extractbench.plugins.outputs.write import Targets

__all__ = ["output_targets"]


def output_targets(
    config: pytest.Config, run_id: str, rescore_path: str | None, taken: Mapping[str, str | None]
) -> Targets:
    """Where this run writes: the record (``--report-json``, else
    ``reports/RUN_ID.json`` under the rootdir), JUnit and HTML (``taken``: the values the
    harness took over from pytest's and pytest-html's options), the markdown summary, the
    exports, the step summary and the CTRF run id.

    Raises:
        pytest.UsageError: every output path that cannot be written, or that names an input
            or another output (one line each), or an unknown export.
    """
    option = config.getoption("report_json")
    record = Path(option) if option else config.rootpath / "reports" / f"{run_id}.json"
    md = config.getoption("summary_md")
    targets = Targets(
        record=record,
        junit=Path(taken["junit"]) if taken.get("junit") else None,
        html=Path(taken["html"]) if taken.get("html") else None,
        markdown=Path(md) if md else None,
        plots=config.getoption("report_plots") == "on",
        **_export_targets(config),
    )
    problems = path_problems(
        [("--baseline", config.getoption("baseline")), ("--rescore", rescore_path)],
        [("--report-json", record), ("--junitxml", targets.junit), ("--html", targets.html),
         ("--summary-md", targets.markdown), ("--ctrf", targets.ctrf),
         # pytest-benchmark's, where installed: it writes the run's speed (outputs/benchmark_json.py)
         ("--benchmark-json", config.getoption("benchmark_json", None))],
        [("--export every-eval-ever", targets.every_eval_ever)],
    )  # fmt: skip
    if problems:
        raise pytest.UsageError("\n".join(problems))
    return targets


def _export_targets(config: pytest.Config) -> dict[str, Any]:
    """The exports, the step summary and the CTRF run of :class:`Targets`."""
    try:
        exports = parse_exports(config.getoption("export"), config.getoption("ctrf"))
    except ExportError as exc:
        raise pytest.UsageError(str(exc)) from None
    return {
        "ctrf": exports.get("ctrf"),
        "every_eval_ever": exports.get("every-eval-ever"),
        "step_summary": step_summary_target(disabled=config.getoption("no_step_summary")),
        "ctrf_run_id": config.getoption("ctrf_run_id"),
        "ci_run_id": ci_run_id(),
    }
