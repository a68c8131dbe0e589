"""The run's output formats, in one table (:data:`FORMATS`).

Each format a user can ask for is one frozen :class:`OutputFormat`: its name, the option
that names it in every message, where the command line gives its path (its own option,
``--export NAME=PATH``, or both), whether that path is a file or a folder, its renderer,
whether the run locks it from its start (every format is), and its command-line options
(:class:`FormatOption`: its path option and its own settings, CTRF's ``--ctrf-run-id``,
JUnit's ``--junit-pass-mark``), which pytest's options
(:mod:`plugins.run.command_line`) and ``extractbench report``/``merge``
(:mod:`plugins.cli.records`) declare from here. The readers of the table:
:func:`plugins.outputs.write_outputs` renders and writes each format given a path;
:func:`given_paths` and :func:`named_outputs` find the paths and name them for the path
checks (:func:`plugins.outputs.paths.path_problems`) of the live run
(:mod:`plugins.run.output_targets`) and of ``extractbench report``/``merge``
(:mod:`plugins.cli.records`); the controller locks them (:mod:`plugins.run.controller`).
A new format, with its options, is one entry here and its renderer.

The GitHub step summary is not a format of this table: its path comes from the CI
(``$GITHUB_STEP_SUMMARY``), is shared by the step's commands and appended to
(:mod:`plugins.outputs.step_summary`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from extractbench.plugins.outputs.ctrf import ci_run_id, ctrf_json
from extractbench.plugins.outputs.eee import eee_files
from extractbench.plugins.outputs.html_report import page_html
from extractbench.plugins.outputs.junit import junit_xml
from extractbench.plugins.outputs.markdown import summary_markdown
from extractbench.plugins.outputs.metric_facts import MetricFacts
from extractbench.plugins.record import dump_record

if TYPE_CHECKING:
    from extractbench.plugins.outputs.paths import Named
    from extractbench.plugins.record import RunRecord
    from extractbench.suites.registry import Registry

__all__ = [
    "BY_NAME", "CLI", "FORMATS", "PYTEST", "RECORD", "ExportError", "FormatOption",
    "OutputFormat", "Rendering", "export_choices", "export_formats", "format_options",
    "format_settings", "given_paths", "named_outputs", "recorded_settings",
]  # fmt: skip

RECORD = "record"  # the run record's format: written last, so it holds the final verdict
PYTEST = "pytest"  # pytest's options (plugins.run.command_line)
CLI = "cli"  # extractbench report and merge (plugins.cli.records)


@dataclass(frozen=True)
class Rendering:
    """What a renderer may use besides the decided record and its own path.

    Attributes:
        registry: the suites (their reports are found by name here).
        facts: each metric's scale and self-judged mark.
        images: the run's pictures (its plots and the suites').
        suite_lines: the suites' own report lines.
        settings: the formats' own settings given on the command line, by their
            :attr:`FormatOption.dest` (:func:`format_settings`: ``ctrf_run_id``).
    """

    registry: Registry
    facts: MetricFacts
    images: Sequence[Path] = ()
    suite_lines: Sequence[str] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)


# (decided record, its path, the rest) -> the text of a file, or a folder's files
# (relative path -> text)
Render = Callable[["RunRecord", Path, Rendering], "str | dict[str, str]"]


@dataclass(frozen=True)
class FormatOption:
    """One command-line option of an output format: the option that gives its path
    (``dest`` is the format's :attr:`OutputFormat.dest`) or one of its own settings.

    Attributes:
        flag: the option (``--ctrf-run-id``).
        dest: the attribute of pytest's options and of ``report``/``merge``'s arguments
            that holds its value.
        help: its ``--help`` line.
        metavar: its value in ``--help``.
        commands: the command lines that declare it (:data:`PYTEST`, :data:`CLI`); pytest's
            own ``--junitxml`` and pytest-html's ``--html`` are not declared for pytest.
        cli_help: its ``--help`` line in ``report``/``merge`` where it differs (there a
            value the record keeps is the default), else None: :attr:`help`.
        type: parses its text (argparse's ``type``: raises ``ArgumentTypeError``, one line
            and exit 4), or None: the text as given.
        recorded: the run record keeps the value (``settings.<dest>``), so ``report`` and
            ``merge`` render the format as the run did.
    """

    flag: str
    dest: str
    help: str
    metavar: str = "PATH"
    commands: tuple[str, ...] = (PYTEST, CLI)
    cli_help: str | None = None
    type: Callable[[str], Any] | None = None
    recorded: bool = False


def _pass_mark(text: str) -> float:
    """``--junit-pass-mark``'s value: a number in (0, 1].

    Raises:
        argparse.ArgumentTypeError: anything else (pytest says it in one line, exit 4).
    """
    try:
        mark = float(text)
    except ValueError:
        mark = float("nan")
    if not 0.0 < mark <= 1.0:  # NaN fails too
        raise argparse.ArgumentTypeError(f"{text!r}: must be a number in (0, 1], e.g. 1")
    return mark


@dataclass(frozen=True)
class OutputFormat:
    """One output format.

    Attributes:
        name: its key in :attr:`plugins.outputs.write.Targets.paths` (and the FORMAT of
            ``--export FORMAT=PATH`` where it is an export).
        option: how every message names it (``--junitxml``, ``--export every-eval-ever``).
        dest: the attribute of the pytest options and of ``extractbench report``/``merge``'s
            arguments that holds its path; None: given by ``--export`` only.
        export: what ``--export NAME=PATH`` writes, for ``--help``; None: not an export.
        render: its renderer.
        folder: its path is a folder it writes files into (else one file).
        shows_plots: it shows the run's plots (they are drawn again for it when the
            record's files are gone).
        locked: the run holds ``<path>.lock`` from its start to its last write.
        options: its command-line options (:class:`FormatOption`): its path option
            (``dest``), then its own settings.
    """

    name: str
    option: str
    dest: str | None
    export: str | None
    render: Render
    folder: bool = False
    shows_plots: bool = False
    locked: bool = True
    options: tuple[FormatOption, ...] = ()


FORMATS: tuple[OutputFormat, ...] = (
    OutputFormat(RECORD, "--report-json", "report_json", None,
                 lambda r, p, c: dump_record(r), options=(
        FormatOption("--report-json", "report_json", "where to write the JSON run record "
                     "(default reports/<run-id>.json beside the project's pytest configuration "
                     "file, or, with none, in the folder the command runs in).",
                     commands=(PYTEST,)),  # merge writes it to -o, report none
    )),
    OutputFormat("junit", "--junitxml", "junitxml", None,
                 lambda r, p, c: junit_xml(r, c.facts), options=(
        FormatOption("--junitxml", "junitxml", "write the run's JUnit XML here",
                     commands=(CLI,)),  # pytest's own option
        FormatOption("--junit-pass-mark", "junit_pass_mark", "--junitxml: an item whose "
                     "every score on a 0-1 scale (higher better) is below SCORE is a failed "
                     "test case, its scores kept beside it (1 with kv: each wrong field is a "
                     "failed case); default: only an item that could not be scored fails.",
                     metavar="SCORE", commands=(PYTEST,), type=_pass_mark, recorded=True),
    )),
    OutputFormat("html", "--html", "html", None,
                 lambda r, p, c: page_html(r, c.images, c.suite_lines, c.facts, p),
                 shows_plots=True, options=(
        FormatOption("--html", "html", "write a self-contained HTML report here",
                     commands=(CLI,)),  # pytest-html's where installed, else the plugin's
    )),
    OutputFormat("markdown", "--summary-md", "summary_md", None,
                 lambda r, p, c: summary_markdown(r, c.images, p.parent.resolve(), c.suite_lines),
                 shows_plots=True, options=(
        FormatOption("--summary-md", "summary_md", "also write a compact markdown summary "
                     "(tables, verdicts, plot links), e.g. for $GITHUB_STEP_SUMMARY.",
                     cli_help="write a markdown summary here"),
    )),
    OutputFormat("every-eval-ever", "--export every-eval-ever", None,
                 "Every Eval Ever schema 0.3.0: per suite an aggregate JSON and its "
                 "instance-level JSONL under DIR/data/...",
                 lambda r, p, c: eee_files(r, c.registry), folder=True),
    OutputFormat("ctrf", "--ctrf", "ctrf", "as --ctrf",
                 lambda r, p, c: ctrf_json(r, c.settings.get("ctrf_run_id"), ci_run_id()),
                 options=(
        FormatOption("--ctrf", "ctrf", "also write a CTRF JSON report (Common Test Report "
                     "Format: one test per item, gate and regression check); its runId is "
                     "shared by the shards of one CI run.",
                     cli_help="write a CTRF JSON report here"),
        FormatOption("--ctrf-run-id", "ctrf_run_id", "the CTRF runId of this run, shared by "
                     "its shards and kept by `extractbench merge` (default: the CI's pipeline "
                     "run: GITHUB_RUN_ID, CI_PIPELINE_ID or BUILD_TAG; else the run id).",
                     metavar="ID",
                     cli_help="CTRF runId (default: the record's, else the CI's pipeline run)"),
    )),
)  # fmt: skip


BY_NAME = {f.name: f for f in FORMATS}


def format_options(command: str) -> list[FormatOption]:
    """Every option of every format that ``command`` (:data:`PYTEST`, :data:`CLI`)
    declares, in the table's order."""
    return [o for f in FORMATS for o in f.options if command in o.commands]


def format_settings(command: str, value: Callable[[str], Any]) -> dict[str, Any]:
    """The formats' own settings ``command`` declares (not their path options), by
    :attr:`FormatOption.dest`: ``value(dest)``, the parsed command line's (``ctrf_run_id``:
    the ``runId`` given, or None)."""
    paths = {f.dest for f in FORMATS}
    return {o.dest: value(o.dest) for o in format_options(command) if o.dest not in paths}


def recorded_settings(value: Callable[[str], Any]) -> dict[str, Any]:
    """The settings the run record keeps (:attr:`FormatOption.recorded`) that were given:
    ``value(dest)`` not None (``junit_pass_mark``)."""
    kept = [o.dest for f in FORMATS for o in f.options if o.recorded]
    return {dest: v for dest in kept if (v := value(dest)) is not None}


def export_formats() -> dict[str, str]:
    """FORMAT -> what it writes, for each format ``--export FORMAT=PATH`` takes."""
    return {f.name: f.export for f in FORMATS if f.export is not None}


def export_choices(described: bool = True) -> str:
    """The formats ``--export`` takes, for ``--help``: ``every-eval-ever=DIR (...),
    ctrf=PATH (as --ctrf)``; without ``described``, ``every-eval-ever=DIR or ctrf=PATH``."""
    named = [(f"{f.name}={'DIR' if f.folder else 'PATH'}", f.export) for f in FORMATS if f.export]
    if described:
        return ", ".join(f"{choice} ({what})" for choice, what in named)
    return " or ".join(choice for choice, _ in named)


class ExportError(ValueError):
    """An ``--export`` value that cannot be used (the message names it and the fix)."""


def given_paths(
    exports: Iterable[str], own: Callable[[OutputFormat], str | None]
) -> dict[str, Path]:
    """Format name -> path of every format the command line names: by its own option
    (``own(format)``: that option's value, or None) or by ``--export FORMAT=PATH``.

    Raises:
        ExportError: an ``--export`` value without ``=``, of an unknown format or with an
            empty path, or one format given two different paths.
    """
    exportable = export_formats()
    found: dict[str, Path] = {}
    pairs = []
    for fmt in FORMATS:
        value = own(fmt) if fmt.dest else None
        if value:
            pairs.append((fmt.name, str(value), fmt.option))
    for value in exports:
        name, sep, path = value.partition("=")
        pairs.append((name.strip(), path.strip() if sep else "", f"--export {value}"))
    for name, path, where in pairs:
        if where.startswith("--export ") and name not in exportable:
            raise ExportError(
                f"{where}: unknown format {name!r}; use FORMAT=PATH with FORMAT one of "
                f"{', '.join(exportable)}"
            )
        if not path:
            raise ExportError(f"{where}: no path; use {name}=PATH")
        if name in found and found[name] != Path(path):
            raise ExportError(f"{where}: {name} is already written to {found[name]}")
        found[name] = Path(path)
    return found


def named_outputs(
    paths: Mapping[str, Path], options: Mapping[str, str] | None = None
) -> tuple[list[Named], list[Named]]:
    """The outputs of :func:`plugins.outputs.paths.path_problems`: (files, folders), each
    ``(option, path or None)`` in the table's order.

    Args:
        paths: format name -> path.
        options: a format's name in this command's messages where it differs from its
            :attr:`OutputFormat.option` (``merge`` writes the record to ``-o``).
    """
    files: list[Named] = []
    folders: list[Named] = []
    for fmt in FORMATS:
        named = ((options or {}).get(fmt.name, fmt.option), paths.get(fmt.name))
        (folders if fmt.folder else files).append(named)
    return files, folders
