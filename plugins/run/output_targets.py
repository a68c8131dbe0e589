"""The run's output paths, checked together before anything runs."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import cast

import pytest

from extractbench.plugins.outputs.formats import (
    PYTEST,
    RECORD,
    ExportError,
    OutputFormat,
    format_settings,
    given_paths,
    named_outputs,
)
from extractbench.plugins.outputs.paths import path_problems
from extractbench.plugins.outputs.step_summary import step_summary_target
from extractbench.plugins.outputs.write import Targets

__all__ = ["output_targets", "reports_folder"]


def reports_folder(config: pytest.Config) -> Path:
    """The default folder of a run's files: ``reports/`` under the rootdir of the pytest
    configuration file the run loaded (the project's), or, with none, under the folder
    the command runs in. Without a configuration file pytest takes its rootdir from the
    arguments that name existing paths, an option's value included (``--data-dir DIR``),
    which would put the run's files into the data folder or above the working folder."""
    base = config.rootpath if config.inipath is not None else config.invocation_params.dir
    return base / "reports"


def output_targets(
    config: pytest.Config, run_id: str, rescore_path: str | None, taken: Mapping[str, str | None]
) -> Targets:
    """Where this run writes: each format of :data:`plugins.outputs.formats.FORMATS` given
    by its option or ``--export`` (the record: ``--report-json``, else
    ``reports/RUN_ID.json`` in :func:`reports_folder`; JUnit and HTML: ``taken``, the values the
    harness took over from pytest's and pytest-html's options, by format name), the step
    summary and the formats' own settings (:func:`plugins.outputs.formats.format_settings`).

    Raises:
        pytest.UsageError: every output path that cannot be written, or that names an input
            or another output (one line each), or an unknown export.
    """

    def own(fmt: OutputFormat) -> str | None:
        if fmt.name in taken:
            return taken[fmt.name]
        return config.getoption(fmt.dest) if fmt.dest else None

    exports = cast("list[str]", config.getoption("export"))  # an append option, default []
    try:
        paths = given_paths(exports, own)
    except ExportError as exc:
        raise pytest.UsageError(str(exc)) from None
    paths.setdefault(RECORD, reports_folder(config) / f"{run_id}.json")
    files, folders = named_outputs(paths)
    problems = path_problems(
        [("--baseline", config.getoption("baseline")), ("--rescore", rescore_path)],
        # pytest-benchmark's, where installed: it writes the run's speed (outputs/benchmark_json.py)
        [*files, ("--benchmark-json", config.getoption("benchmark_json", None))],
        folders,
    )
    if problems:
        raise pytest.UsageError("\n".join(problems))
    return Targets(
        paths=paths,
        plots=config.getoption("report_plots") == "on",
        step_summary=step_summary_target(disabled=bool(config.getoption("no_step_summary"))),
        settings=format_settings(PYTEST, config.getoption),
    )
