"""``extractbench report``, ``merge`` and ``schema``: run records outside pytest.

``report`` and ``merge`` end exactly as a live run does: one call of
:func:`plugins.verdict.decide` on the record's facts, one of
:func:`plugins.outputs.write_outputs`, then the same summary lines; the exit status is
the verdict's. ``report`` of a record therefore gives the exit status and the words of the
run that wrote it (with ``--baseline``, decided again against that baseline).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import extractbench.plugins.outputs
import extractbench.plugins.verdict
from extractbench.plugins.cli.merge import MergeError, merge_records, record_gates
from extractbench.plugins.outputs.formats import (
    CLI,
    RECORD,
    ExportError,
    OutputFormat,
    export_choices,
    format_options,
    format_settings,
    given_paths,
    named_outputs,
)
from extractbench.plugins.outputs.paths import path_problems
from extractbench.plugins.outputs.step_summary import step_summary_target
from extractbench.plugins.outputs.terminal import summary_lines
from extractbench.plugins.outputs.write import Targets
from extractbench.plugins.record import RunRecord, load_record, record_schema
from extractbench.plugins.verdict.baseline import (
    incomparable_line,
    incomparable_records,
    partial_baseline,
)
from extractbench.plugins.verdict.decision import GateSet
from extractbench.plugins.verdict.exit_codes import USAGE_ERROR
from extractbench.plugins.verdict.speed import check_max_slowdown
from extractbench.suites.registry import Registry

__all__ = ["add_export_arguments", "report_command", "merge_command", "schema_command"]


def add_export_arguments(parser: argparse.ArgumentParser) -> None:
    """The output formats' options (each declared with its format's row,
    :data:`plugins.outputs.formats.FORMATS`), the exports and the step summary, as the
    pytest options of the same names."""
    for option in format_options(CLI):
        parser.add_argument(option.flag, dest=option.dest, metavar=option.metavar,
                            help=option.cli_help or option.help, type=option.type or str)  # fmt: skip
    parser.add_argument("--export", action="append", default=[], metavar="FORMAT=PATH",
                        help=f"also write {export_choices(False)} (repeatable)")  # fmt: skip
    parser.add_argument("--no-step-summary", action="store_true",
                        help="do not write the summary to $GITHUB_STEP_SUMMARY")  # fmt: skip


def _paths(args: argparse.Namespace, out: str | None) -> dict[str, Path]:
    """Format name -> path of each output the command writes: its option's argument of
    the format's ``dest`` (as the pytest options of the same names) or ``--export``; the
    record: ``out`` (``merge -o``).

    Raises:
        ExportError: a bad ``--export`` value.
    """

    def own(fmt: OutputFormat) -> str | None:
        return out if fmt.name == RECORD else getattr(args, fmt.dest or "", None)

    return given_paths(args.export, own)


def _targets(args: argparse.Namespace, out: str | None, **more: bool) -> Targets:
    """The files of :func:`_paths`, the step summary and the CTRF run of :class:`Targets`.

    Raises:
        ExportError: a bad ``--export`` value.
    """
    return Targets(
        paths=_paths(args, out),
        step_summary=step_summary_target(disabled=args.no_step_summary),
        settings=format_settings(CLI, lambda dest: getattr(args, dest)), **more,
    )  # fmt: skip


def _finish(record: RunRecord, gates: GateSet, targets: Targets) -> int:
    """Decide, write, print the summary; the exit status."""
    verdict = extractbench.plugins.verdict.decide(record, gates, record.selection)
    written = extractbench.plugins.outputs.write_outputs(record, verdict, targets, Registry.installed())
    for line in summary_lines(
        written.record, written.terminal_lines, written.record_path, written.facts.self_judged,
        written.facts.own_suites,
    ):  # fmt: skip
        print(line)
    return written.verdict.status


def _gates(
    record: RunRecord, args: argparse.Namespace, where: str, compared: RunRecord, name: str
) -> GateSet:
    """The gates ``record`` is decided on, and the ``--baseline`` comparison of
    ``compared`` (the record, or the merged shards: called ``name`` in messages).

    Raises:
        MergeError: a baseline measured with another protocol
            (:func:`plugins.verdict.baseline.incomparable_records`) unless
            ``--allow-incomparable-baseline``, a partial one, a bad ``--max-slowdown``.
    """
    baseline = load_record(Path(args.baseline)) if args.baseline else None
    if baseline is not None and not args.allow_incomparable_baseline:
        if changes := incomparable_records(compared, baseline, name):
            raise MergeError(incomparable_line(f"--baseline {args.baseline}", changes))
    partial = baseline is not None and partial_baseline(
        baseline, args.baseline, args.max_regression, bool(args.allow_partial_baseline)
    )
    if partial:
        raise MergeError(partial)
    recorded = (
        record.baseline.model_dump(mode="json") if record.baseline and baseline is None else None
    )
    max_regression = args.max_regression
    if baseline is None and record.baseline is not None:
        max_regression = record.baseline.max_regression
    try:
        slowdown = check_max_slowdown(args.max_slowdown, baseline is not None)
    except ValueError as exc:
        raise MergeError(str(exc)) from None
    if baseline is None and record.baseline is not None:
        slowdown = record.baseline.max_slowdown
    return GateSet(
        record_gates(record, where), baseline, recorded, max_regression,
        bool(args.allow_incomparable_baseline), bool(args.allow_partial_baseline), slowdown,
    )  # fmt: skip


def _clashes(command: str, args: argparse.Namespace, records: list[str], out: str | None) -> bool:
    """Whether the command's files clash (:func:`path_problems`: two name one file, an
    output names a folder, a bad ``--export``); each problem printed as one line."""
    try:
        files, folders = named_outputs(_paths(args, out), {RECORD: "-o"})
    except ExportError as exc:
        print(f"extractbench {command}: {exc}", file=sys.stderr)
        return True
    problems = path_problems(
        [*(("record", r) for r in records), ("--baseline", args.baseline)], files, folders
    )
    for line in problems:
        print(f"extractbench {command}: {line}", file=sys.stderr)
    return bool(problems)


def report_command(args: argparse.Namespace) -> int:
    """Render the reports of a run record; return the run's own exit status."""
    if _clashes("report", args, [args.record], None):
        return USAGE_ERROR
    record = load_record(Path(args.record))
    try:
        gates = _gates(record, args, args.record, record, args.record)
        targets = _targets(args, None, artifacts=False)
    except (MergeError, ExportError) as exc:
        print(f"extractbench report: {exc}", file=sys.stderr)
        return USAGE_ERROR
    return _finish(record, gates, targets)


def merge_command(args: argparse.Namespace) -> int:
    """The shards' run records as one run's record, JUnit and summaries; that run's exit
    status (4 when the records cannot be merged)."""
    if _clashes("merge", args, list(args.records), args.out):
        return USAGE_ERROR
    records = [load_record(Path(p)) for p in args.records]
    try:
        merged = merge_records(records, args.records)
        gates = _gates(records[0], args, args.records[0], merged, "the merged shards")
        targets = _targets(args, args.out)
    except (MergeError, ExportError) as exc:
        print(f"extractbench merge: {exc}", file=sys.stderr)
        return USAGE_ERROR
    counts = merged.counts
    print(f"merged {len(records)} shards: {counts.scored} items scored, {counts.failed} failed, "
          f"of {counts.expected} selected")  # fmt: skip
    return _finish(merged, gates, targets)


def schema_command(args: argparse.Namespace) -> int:
    """Print (or write with ``--out``) the run record's JSON Schema."""
    text = json.dumps(record_schema(), indent=1) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0
