"""``write_outputs``: every file a run ends with, from its decided record, in one place.

The live run, ``--rescore``, ``extractbench merge`` and ``extractbench report`` call
:func:`write_outputs` once with the record and the verdict :func:`plugins.verdict.decide`
gave, and the files they want (:class:`Targets`). Plots and the suites' own files go
into one folder beside the run record, named after the run (``reports/RUN_ID/``, listed
in the record's ``artifacts``); then each format of :data:`plugins.outputs.formats.FORMATS`
given a path, in the table's order (JUnit, HTML, the markdown summary, the exports: Every
Eval Ever, CTRF), and the GitHub step summary; the run record last, so it holds the final
verdict. An output that cannot be written is one line in the record's
``output_errors`` and the verdict becomes exit 6 (:meth:`Verdict.with_lost_outputs`); if
the record itself cannot be written, the other outputs are written again so that none of
them says more than the run could keep, and an earlier run's record at that path is
removed so no reader takes it for this run's. Every secret the process knows (an API key,
URL credentials, header values: :mod:`fixtures.models.redact`) is masked here, in the record
the documents are rendered from and in each file's text, whatever path it came by.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extractbench.fixtures.models.redact import known_secrets, redact_json, redact_secrets
from extractbench.plugins.outputs.formats import BY_NAME, FORMATS, RECORD, Render, Rendering
from extractbench.plugins.outputs.metric_facts import MetricFacts, metric_facts
from extractbench.plugins.outputs.plots import metric_plots
from extractbench.plugins.outputs.step_summary import StepSummary, step_summary_markdown
from extractbench.plugins.outputs.suite_reports import suite_reports
from extractbench.plugins.outputs.terminal import terminal_suite_lines
from extractbench.plugins.record import RunRecord
from extractbench.plugins.verdict.decision import Verdict
from extractbench.suites.files import path_kind, write_output
from extractbench.suites.registry import Registry

__all__ = ["Targets", "Written", "write_outputs", "remove_stale", "side_folder"]


@dataclass(frozen=True)
class Targets:
    """The files a run writes.

    Attributes:
        paths: format name -> its path, for each format of
            :data:`plugins.outputs.formats.FORMATS` wanted (the run record:
            ``--report-json``, default ``reports/<run-id>.json``; JUnit, HTML, the markdown
            summary, the exports).
        artifacts: write plots and the suites' own files beside the record (a live run,
            merge); False reuses the record's files (``extractbench report``).
        plots: draw the plots of the run's metrics (``--report-plots``); False draws none
            (the suites' own files are written either way).
        step_summary: ``$GITHUB_STEP_SUMMARY`` (and what the step wrote there before).
        settings: the formats' own settings as the command line gave them
            (:func:`plugins.outputs.formats.format_settings`: CTRF's ``ctrf_run_id``).
    """

    paths: Mapping[str, Path] = field(default_factory=dict)
    artifacts: bool = True
    plots: bool = True
    step_summary: StepSummary | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)

    @property
    def record(self) -> Path | None:
        """The run record's path, or None (``extractbench report`` writes none)."""
        return self.paths.get(RECORD)


@dataclass
class Written:
    """What :func:`write_outputs` did.

    Attributes:
        record: the final record (verdict after lost outputs, artifacts listed).
        verdict: the final verdict (its status is the exit status).
        suite_lines: the suites' own report lines (the HTML page and markdown show them).
        terminal_lines: those the terminal shows (a folded suite's as one line:
            :func:`plugins.outputs.terminal.terminal_suite_lines`).
        files: every file written.
        record_path: where the record was written, or None.
        facts: each metric's scale and self-judged mark (the terminal marks them too).
    """

    record: RunRecord
    verdict: Verdict
    suite_lines: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    record_path: Path | None = None
    facts: MetricFacts = field(default_factory=MetricFacts)
    terminal_lines: list[str] = field(default_factory=list)


def remove_stale(path: Path) -> str:
    """After a failed write: remove an earlier run's record at ``path``, so no reader
    takes it for this run's; only a regular file is removed (never a device such as
    ``/dev/full``). Returns one line saying what became of it."""
    kind = path_kind(path)
    if kind is None:
        return "no file was left there"
    if kind != "file":
        return f"it is a {kind}, left as it is"
    try:
        path.unlink()
    except (FileNotFoundError, NotADirectoryError):
        return "no file was left there"
    except OSError as exc:
        return (
            f"THE FILE AT {path} IS AN EARLIER RUN'S RECORD and could not be removed "
            f"({exc.strerror or exc})"
        )
    return "the earlier run's record that was there has been removed"


def _images(
    record: RunRecord, targets: Targets, folder: Path, stem: str, facts: MetricFacts
) -> list[Path]:
    """The run's own plots: drawn for a live run or a merge; for ``extractbench report``
    the record's files where they are still there, else drawn again; none with
    ``--report-plots off``."""
    if not targets.plots:
        return []
    if targets.artifacts:
        return metric_plots(record, folder, stem, facts)
    existing = [Path(p) for p in record.artifacts if Path(p).is_file()]
    if existing or not any(targets.paths.get(f.name) for f in FORMATS if f.shows_plots):
        return existing
    return metric_plots(record, folder, stem, facts)


def side_folder(anchor: Path, run_id: str) -> Path:
    """Where a run's side files (plots, the suites' tables) go: one folder named after the
    run beside its record (``reports/RUN_ID.json`` -> ``reports/RUN_ID/``)."""
    return anchor.parent / run_id


def _anchor(targets: Targets) -> Path | None:
    """The file the side folder sits beside: the record, else a page that shows the
    plots, else any other file written; only a regular file (or a path where one will be
    made): never a character device such as ``/dev/null``, beside which the folder would
    land in ``/dev``. None when no output is a file (no side files then)."""
    ranked = sorted((f for f in FORMATS if not f.folder), key=lambda f: (
        f.name != RECORD, not f.shows_plots))  # fmt: skip
    files = [targets.paths[f.name] for f in ranked if targets.paths.get(f.name)]
    if not files:
        return Path("run")
    return next((p for p in files if path_kind(p) in (None, "file")), None)


def _documents(targets: Targets) -> list[tuple[str, Path, Render]]:
    """(option, path, render) of each wanted document but the record, in the table's
    order, then the step summary; a render that returns a dict writes its files
    (relative path -> text) under ``path``."""
    wanted = [
        (f.option, targets.paths[f.name], f.render)
        for f in FORMATS
        if f.name != RECORD and targets.paths.get(f.name) is not None
    ]
    step = targets.step_summary
    if step and step.path != targets.paths.get("markdown"):
        before = step.before
        wanted.append(("$GITHUB_STEP_SUMMARY", step.path,
                       lambda r, p, c: step_summary_markdown(r, c.suite_lines, before)))  # fmt: skip
    return wanted


def _write(path: Path, content: str | dict[str, str]) -> list[Path]:
    """Write one document (or a folder's files), secrets masked; the paths written."""
    if isinstance(content, str):
        return [write_output(path, redact_secrets(content))]
    return [write_output(path / rel, redact_secrets(text)) for rel, text in content.items()]


def _redacted(record: RunRecord) -> RunRecord:
    """``record`` with every secret the process knows masked in its strings."""
    if not known_secrets():
        return record
    return RunRecord.model_validate(redact_json(record.model_dump(mode="json"), urls=False))


def write_outputs(
    record: RunRecord, verdict: Verdict, targets: Targets, registry: Registry
) -> Written:
    """Write the outputs of a decided run (see the module docstring).

    Args:
        record: the run record (facts; the verdict is applied here).
        verdict: what :func:`plugins.verdict.decide` returned for it.
        targets: the files wanted.
        registry: the suites, whose reports (``Suite.summary_lines``,
            ``Suite.write_artifacts``) are found by name here, never by a name read
            from the record.

    Returns:
        :class:`Written`; ``verdict.status`` is the exit status. Never raises for an
        output that cannot be written (it is an output error).
    """
    lost: list[str] = []
    anchor, stem = _anchor(targets), record.run_id
    folder = side_folder(anchor, record.run_id) if anchor is not None else Path(stem)
    record = _redacted(record).decided(verdict)
    facts = metric_facts(record, registry)
    sides = targets.artifacts and anchor is not None  # no folder beside a device
    suite_lines, files, by_suite = suite_reports(record, registry, folder, stem, sides, lost)
    terminal_lines = terminal_suite_lines(by_suite, record, facts.own_suites)
    try:
        plots = _images(record, targets, folder, stem, facts) if anchor is not None else []
    except Exception as exc:  # a plot must never lose the run record
        plots = []
        suite_lines.append(f"plots failed: {type(exc).__name__}: {exc}")
        terminal_lines.append(suite_lines[-1])
    files += plots
    # every picture of the run is shown: its own plots and the suites' (heatmaps, tables)
    images = [p for p in dict.fromkeys(files) if p.suffix == ".png"]
    artifacts = [str(p) for p in files] if targets.artifacts else record.artifacts
    record = record.model_copy(update={"artifacts": artifacts})

    empty: list[str] = []  # exports with nothing to hold: said, as a warning

    def final() -> tuple[RunRecord, Verdict]:
        decided = verdict.with_lost_outputs(lost)
        errors = list(dict.fromkeys([*record.output_errors, *lost]))
        warnings = list(dict.fromkeys([*record.warnings, *empty]))
        update = {"output_errors": errors, "warnings": warnings}
        return record.model_copy(update=update).decided(decided), decided

    documents = _documents(targets)
    rendering = Rendering(registry, facts, images, suite_lines, targets.settings)
    written: set[str] = set()

    def settle(names: set[str]) -> None:
        """Write the documents named; again with the final verdict while writing one
        of them loses another (none may say more than the run could keep)."""
        for _ in range(3):
            before = len(lost)
            current = final()[0]
            for name, path, render in documents:
                if name not in names:
                    continue
                try:
                    content = render(current, path, rendering)
                    said = f"{name} {path}: nothing written: no item was scored, so no result"
                    if isinstance(content, dict) and not content and said not in empty:
                        empty.append(said)
                    files.extend(_write(path, content))
                except OSError as exc:
                    lost.append(f"{name} {path}: not written ({exc.strerror or exc})")
                    names.discard(name)
                else:
                    written.add(name)
            if len(lost) == before:
                return

    settle({name for name, _, _ in documents})
    written_at = None
    if targets.record is not None:
        try:
            content = BY_NAME[RECORD].render(final()[0], targets.record, rendering)
            files.extend(_write(targets.record, content))
            written_at = targets.record
        except (OSError, ValueError) as exc:
            reason = getattr(exc, "strerror", None) or exc
            lost.append(f"run record {targets.record}: {reason}; {remove_stale(targets.record)}")
            settle(set(written))
    record, decided = final()
    return Written(
        record, decided, suite_lines, list(dict.fromkeys(files)), written_at, facts,
        terminal_lines,
    )  # fmt: skip
