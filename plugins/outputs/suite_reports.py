"""The suites' own reports of a run record: terminal lines and files (tables, heatmaps)."""

from __future__ import annotations

from pathlib import Path

from extractbench.plugins.outputs.metric_facts import MIN_PLOT_N
from extractbench.plugins.record import RunRecord
from extractbench.suites.registry import Registry

__all__ = ["suite_reports"]


def suite_reports(
    record: RunRecord,
    registry: Registry,
    folder: Path,
    stem: str,
    write_files: bool,
    lost: list[str],
) -> tuple[list[str], list[Path], dict[str, list[str]]]:
    """Run each suite's report (``Suite.summary_lines``, ``Suite.write_artifacts``) on the
    record (a suite of fewer than ``MIN_PLOT_N`` scored items keeps its tables, not its
    pictures: Table-QA's heatmaps, MINEA's criteria plot); the suite is found by its name in the registry, never by a name read from the
    record (a record never names code to import).

    A suite's report reads the record as JSON data (its own ``details`` are its own
    schema). With ``write_files`` its files go to ``folder`` (named ``<stem>-...``) and
    are listed under ``suites.<name>.artifacts`` of ``record`` (updated in place). A
    failing report costs only its own output, with one line saying why; a folder that
    cannot be created is an output error appended to ``lost``.

    Returns:
        The suites' terminal lines, the files written, and each suite's lines (suite ->
        its lines, a failed report's one line included).
    """
    lines: list[str] = []
    by_suite: dict[str, list[str]] = {}
    paths: list[Path] = []
    data = record.as_dict()
    for name, info in sorted(record.suites.items()):
        suite = registry.get(name)
        if suite is None or suite.report is None:
            continue
        start = len(lines)
        if write_files and not folder.is_dir():  # made for a suite that writes files only
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                lost.append(f"report folder {folder}: cannot be created ({exc.strerror or exc})")
                write_files = False
        try:
            lines += suite.summary_lines(data)
            if write_files:
                written = suite.write_artifacts(data, folder, stem)
                scored = sum(it.suite == name and it.outcome == "passed" for it in record.items)
                if scored < MIN_PLOT_N:  # its tables stay; a picture of so few items is noise
                    for picture in [p for p in written if p.suffix == ".png"]:
                        picture.unlink(missing_ok=True)
                    written = [p for p in written if p.suffix != ".png"]
                info.artifacts = [str(p) for p in written]
                paths += written
        except Exception as exc:  # a report must never lose the run record
            lines.append(f"{name}: report {suite.report} failed: {type(exc).__name__}: {exc}")
        by_suite[name] = lines[start:]
    return lines, paths, by_suite
