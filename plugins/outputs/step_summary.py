"""The GitHub Actions job summary: written by every run when ``$GITHUB_STEP_SUMMARY`` is set.

GitHub gives each step a file (``$GITHUB_STEP_SUMMARY``) whose markdown it shows on the
run's page, and refuses one above 1 MiB ("supports content up to a size of 1024k"). A run
(live, ``--rescore``, ``extractbench merge`` or ``report``) writes there the markdown
summary (:func:`plugins.outputs.markdown.summary_markdown`) after what the step had
already written (read when the run starts), without plot links (the runner's files are
not on the page), and keeps the whole file under :data:`STEP_SUMMARY_LIMIT`: the suites'
own tables go first, then rows from the end, with a line saying what was left out.
``--no-step-summary`` (or an empty variable) turns it off.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from extractbench.plugins.outputs.markdown import summary_markdown
from extractbench.plugins.record import RunRecord

__all__ = ["STEP_SUMMARY_LIMIT", "StepSummary", "step_summary_target", "step_summary_markdown"]

STEP_SUMMARY_LIMIT = 1024 * 1024  # bytes: GitHub's limit of one step's summary


@dataclass(frozen=True)
class StepSummary:
    """Where the step's summary goes, and what the step had written there before the run."""

    path: Path
    before: str = ""


def step_summary_target(
    environ: Mapping[str, str] | None = None, disabled: bool = False
) -> StepSummary | None:
    """The step summary of this process (``$GITHUB_STEP_SUMMARY``), or None outside
    GitHub Actions or with ``--no-step-summary``. What the file holds now is kept."""
    env = os.environ if environ is None else environ
    value = env.get("GITHUB_STEP_SUMMARY", "")
    if disabled or not value:
        return None
    path = Path(value)
    try:
        before = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        before = ""  # absent (or unreadable: the write will say so, as an output error)
    return StepSummary(path, before)


def _fits(text: str, room: int) -> bool:
    return len(text.encode("utf-8")) <= room


def step_summary_markdown(
    record: RunRecord,
    suite_lines: Sequence[str],
    before: str = "",
    limit: int = STEP_SUMMARY_LIMIT,
) -> str:
    """``before`` followed by the run's markdown summary, at most ``limit`` bytes in all.

    Args:
        record: a decided run record.
        suite_lines: the suites' own report lines (dropped first when too long).
        before: what the step had written to the file before the run.
        limit: the size limit in bytes (GitHub's 1 MiB).
    """
    room = limit - len(before.encode("utf-8"))
    note = "\n_(extractbench: cut to GitHub's 1 MiB step-summary limit; the run record and the HTML report hold everything)_\n"
    for lines in (suite_lines, ()):
        text = summary_markdown(record, (), None, lines)
        if _fits(text, room):
            return before + text
    budget = room - len(note.encode("utf-8"))
    if budget < 0:
        return before
    kept, used = [], 0  # the longest run of whole lines from the top that fits with the note
    for line in text.splitlines(keepends=True):
        used += len(line.encode("utf-8"))
        if used > budget:
            break
        kept.append(line)
    return before + "".join(kept) + note
