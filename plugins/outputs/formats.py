"""The run's output formats, in one table (:data:`FORMATS`).

Each format a user can ask for is one frozen :class:`OutputFormat`: its name, the option
that names it in every message, where the command line gives its path (its own option,
``--export NAME=PATH``, or both), whether that path is a file or a folder, its renderer,
and whether the run locks it from its start (every format is). The readers of the table:
:func:`plugins.outputs.write_outputs` renders and writes each format given a path;
:func:`given_paths` and :func:`named_outputs` find the paths and name them for the path
checks (:func:`plugins.outputs.paths.path_problems`) of the live run
(:mod:`plugins.run.output_targets`) and of ``extractbench report``/``merge``
(:mod:`plugins.cli.records`); the controller locks them (:mod:`plugins.run.controller`).
A new format is one entry here and its renderer.

The GitHub step summary is not a format of this table: its path comes from the CI
(``$GITHUB_STEP_SUMMARY``), is shared by the step's commands and appended to
(:mod:`plugins.outputs.step_summary`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from extractbench.plugins.outputs.ctrf import ctrf_json
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
    "BY_NAME", "FORMATS", "RECORD", "ExportError", "OutputFormat", "Rendering", "export_choices",
    "export_formats", "given_paths", "named_outputs",
]  # fmt: skip

RECORD = "record"  # the run record's format: written last, so it holds the final verdict


@dataclass(frozen=True)
class Rendering:
    """What a renderer may use besides the decided record and its own path.

    Attributes:
        registry: the suites (their reports are found by name here).
        facts: each metric's scale and self-judged mark.
        images: the run's pictures (its plots and the suites').
        suite_lines: the suites' own report lines.
        ctrf_run_id: ``--ctrf-run-id``; ci_run_id: the CI's pipeline run.
    """

    registry: Registry
    facts: MetricFacts
    images: Sequence[Path] = ()
    suite_lines: Sequence[str] = ()
    ctrf_run_id: str | None = None
    ci_run_id: str | None = None


# (decided record, its path, the rest) -> the text of a file, or a folder's files
# (relative path -> text)
Render = Callable[["RunRecord", Path, Rendering], "str | dict[str, str]"]


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
    """

    name: str
    option: str
    dest: str | None
    export: str | None
    render: Render
    folder: bool = False
    shows_plots: bool = False
    locked: bool = True


FORMATS: tuple[OutputFormat, ...] = (
    OutputFormat(RECORD, "--report-json", "report_json", None,
                 lambda r, p, c: dump_record(r)),
    OutputFormat("junit", "--junitxml", "junitxml", None,
                 lambda r, p, c: junit_xml(r, c.facts)),
    OutputFormat("html", "--html", "html", None,
                 lambda r, p, c: page_html(r, c.images, c.suite_lines, c.facts, p),
                 shows_plots=True),
    OutputFormat("markdown", "--summary-md", "summary_md", None,
                 lambda r, p, c: summary_markdown(r, c.images, p.parent.resolve(), c.suite_lines),
                 shows_plots=True),
    OutputFormat("every-eval-ever", "--export every-eval-ever", None,
                 "Every Eval Ever schema 0.3.0: per suite an aggregate JSON and its "
                 "instance-level JSONL under DIR/data/...",
                 lambda r, p, c: eee_files(r, c.registry), folder=True),
    OutputFormat("ctrf", "--ctrf", "ctrf", "as --ctrf",
                 lambda r, p, c: ctrf_json(r, c.ctrf_run_id, c.ci_run_id)),
)  # fmt: skip


BY_NAME = {f.name: f for f in FORMATS}


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
