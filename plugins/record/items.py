"""The run record's entries for what ran: a benchmark item, a plain test beside the suites,
a process that crashed (the typed models :mod:`plugins.record.models` holds in lists); and
the items counted by outcome, once for every reader (the record's ``counts``, the verdict's
gates, the JUnit file)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RecordModel", "Crash", "OtherTest", "ItemEntry", "OutcomeCounts", "outcome_counts"]


class RecordModel(BaseModel):
    """A section of the run record: unknown fields and loose types are refused."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Crash(RecordModel):
    """A process that died from a signal while running an item (``plugins.run.crashes``)."""

    item: str
    nodeid: str
    worker: str
    message: str
    signal: str | None = None
    frame: str | None = None
    library: str | None = None
    fault_report: str = ""


class OtherTest(RecordModel):
    """A test that is not a benchmark item (a plain test collected beside the suites)."""

    nodeid: str
    outcome: Literal["passed", "failed", "skipped"]
    duration_s: float = 0.0
    error: str | None = None


class ItemEntry(RecordModel):
    """One benchmark item: its prompt digest, the model's answer, its scores.

    ``scores`` maps a metric name (without the ``suite/`` prefix) to a value (None: not
    computed for this item, kept out of the mean); ``prompt_tail`` is the prompt's end
    (the question or cue, at most ``plugins.run.item_record.PROMPT_TAIL`` characters: the record keeps no whole
    prompt), ``prompt_chars`` its length; ``calls`` logs every model call
    (``--rescore`` answers from it); ``details`` holds the suite's own facts.
    """

    id: str
    suite: str
    group: str = ""
    prompt_sha256: str = ""
    prompt_tail: str = ""
    prompt_chars: int | None = None
    prediction: Any = None
    reference: Any = None
    scores: dict[str, float | None] = Field(default_factory=dict)
    tokens: dict[str, int] = Field(default_factory=dict)
    latency_s: float | None = None
    meta: dict[str, Any] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)
    calls: list[dict[str, Any]] = Field(default_factory=list)
    outcome: Literal["passed", "failed", "skipped"] = "passed"
    test: str | None = None
    error: str | None = None
    stop: dict[str, str] | None = None


class OutcomeCounts(NamedTuple):
    """Items by outcome, the one count the record's ``counts``, the verdict's gates and the
    JUnit file read: ``scored`` (passed), ``failed``, ``skipped``, and per suite the items
    not scored (failed or skipped: a gate on that suite fails closed)."""

    scored: int
    failed: int
    skipped: int
    not_scored_by_suite: dict[str, int]


def outcome_counts(items: Iterable[Any]) -> OutcomeCounts:
    """:class:`OutcomeCounts` of ``items`` (the record's item entries: ``outcome``,
    ``suite``)."""
    by_outcome: Counter[str] = Counter()
    not_scored: Counter[str] = Counter()
    for it in items:
        by_outcome[it.outcome] += 1
        if it.outcome != "passed":
            not_scored[it.suite] += 1
    return OutcomeCounts(
        by_outcome["passed"], by_outcome["failed"], by_outcome["skipped"], dict(not_scored)
    )
