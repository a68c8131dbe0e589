"""The run record as typed models: one JSON file per run, from which every report is made.

Every reader (the verdict, JUnit, HTML, markdown, the terminal, ``--rescore``,
``--baseline``, ``extractbench merge`` and ``report``) loads a record into
:class:`RunRecord` and reads its fields (``plugins.record.json_io``: load, validate,
dump, JSON Schema). The sections whose content belongs to one part of
the harness (``model``, ``settings``, ``data``, ``code``, a suite's ``notes``, an item's
``details`` and ``calls``) are JSON objects the models keep as they are.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

from pydantic import Field

from extractbench.plugins.record.items import (
    Crash,
    ItemEntry,
    OtherTest,
    RecordModel,
    outcome_counts,
)
from extractbench.plugins.record.values import (
    Comparison,
    GateSequence,
    RunOrder,
    SpeedChange,
    SpeedStats,
)

__all__ = [
    "SCHEMA_VERSION", "READABLE_VERSIONS", "RunRecord", "SuiteInfo", "LimitInfo", "Selection",
    "Counts", "Aggregate", "GateEntry", "Baseline", "VerdictEntry", "RescoreOf", "MergedShard",
    "Decision", "new_run_id", "item_counts", "NotEvaluated",
]  # fmt: skip

SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)  # version 1 records (no selection, no verdict status) still load


_Model = RecordModel


class LimitInfo(_Model):
    value: int
    source: str


class SuiteInfo(_Model):
    """A suite's facts in this run: its version, breakdown attributes, items in its data and selected,
    the cap that applied, the suite's notes (provenance, warnings), its report files, the
    labels its loader could not place in their document, and with ``--stop-when-decided``
    the order its items ran in and those not run."""

    breakdown: list[str] = Field(default_factory=list)
    version: int | None = Field(
        default=None,
        description="the suite's version (its definition's Suite.version) this run scored "
        "it at; absent from records written before suites declared one",
    )
    items_total: int | None = None
    items_selected: int | None = None
    limit: LimitInfo | None = None
    notes: dict[str, Any] = Field(default_factory=dict)
    artifacts: list[str] = Field(default_factory=list)
    missing_labels: list[str] = Field(
        default_factory=list,
        description="labels whose value was not found in their document (file:line, "
        "document/key): no items; the gateable figure SUITE/missing_labels counts them",
    )
    run_order: RunOrder | None = None

    @property
    def stopped_early(self) -> bool:
        """Whether the suite left items out because ``--stop-when-decided`` decided its
        gates (its speed and means are then those of its first groups)."""
        return bool(self.run_order is not None and self.run_order.not_run)


class Selection(_Model):
    """What the command selected, as the verdict needs it (``plugins.verdict.decide``).

    Attributes:
        suites: suites the command's paths (or the ``--rescore`` record) selected.
        skipped: suite -> why it was skipped (``--skip-missing-data``).
        unloaded: suite -> why its data did not load (a usage error of the run).
        deselected: suite -> items of it that ``-k``, ``-m``, ``--deselect`` or ``--lf``
            left out (a subset of the suite).
        allow_subset: ``--allow-subset``: gates may be decided on such a subset.
        shard: ``K/N`` for one shard of a run (decides no gate), None otherwise.
        narrow: the command named suites one by one (their folders, packages, files or
            node ids), not the whole suites package: a gate on a suite it left out is
            "not selected by this command"; it leaves the run INCOMPLETE unless
            ``allow_subset`` (:attr:`gates_may_be_left_out`).
    """

    suites: list[str] = Field(default_factory=list)
    skipped: dict[str, str] = Field(default_factory=dict)
    unloaded: dict[str, str] = Field(default_factory=dict)
    deselected: dict[str, int] = Field(default_factory=dict)
    allow_subset: bool = False
    shard: str | None = None
    narrow: bool = False

    @property
    def gates_may_be_left_out(self) -> bool:
        """A gate on a suite this command did not select may stay unevaluated without
        failing the run: the command named suites one by one and ``--allow-subset``."""
        return self.narrow and self.allow_subset


class Counts(_Model):
    """Items finished, expected (selected), scored (passed), failed, not run because
    their suite's gates were decided early; model calls logged and those the cache or a
    record answered."""

    items: int = 0
    expected: int = 0
    scored: int = 0
    failed: int = 0
    not_run: int = 0
    calls: int = 0
    cached_calls: int = 0


class Aggregate(_Model):
    """Mean, 95% CI and n of one ``suite/metric`` (``plugins.verdict.aggregate``), with
    the breakdowns by item attribute; ``ci_method`` the interval's method (``wilson``,
    ``bootstrap``, ``none``; ``wilson_deff``, ``cluster_bootstrap`` when its items share
    groups), ``groups`` the number of groups that interval accounted for (None: every
    item its own group); ``stopped_early``: its suite was stopped once its
    gates were decided (``--stop-when-decided``), so the mean is a stopped estimate over
    the items the data let run: ``ci_low``/``ci_high`` are then the anytime-valid bounds of
    the suite's mean (``ci_method`` says so), or, for a breakdown row or a metric without a
    finite range, the fixed-n numbers kept for the record only (``ci_method`` "none: ...";
    the reports show no interval)."""

    mean: float
    ci_low: float
    ci_high: float
    n: int
    ci_method: str
    groups: int | None = None
    breakdowns: dict[str, dict[str, Aggregate]] | None = None
    stopped_early: bool = False


NotEvaluated = Literal["not_selected", "skipped", "unloaded"]


class GateEntry(_Model):
    """A gate checked against the run, as :func:`plugins.verdict.decide` gives it to the
    record and to every report (``plugins.verdict.gates.evaluate_gates``): ``passed``
    None when it was not decided; ``stat`` the statistic it checks, ``n`` the values
    behind it, ``min_n`` the minimum n that applied, ``warning`` a mean of too few items,
    ``not_evaluated`` why a gate of a suite that did not run was not evaluated,
    ``sequence`` how its confidence sequence decided it (``--stop-when-decided``)."""

    expression: str
    metric: str
    op: str
    threshold: float
    source: str
    value: float | None = None
    passed: bool | None = None
    reason: str = ""
    stat: str = "mean"
    n: int | None = None
    min_n: int | None = None
    warning: str | None = None
    not_evaluated: NotEvaluated | None = None
    sequence: GateSequence | None = None


class Baseline(_Model):
    """The comparison with ``--baseline``: overlap, a paired test per metric, and each
    speed figure's slowdown against ``max_slowdown``."""

    run_id: str = ""
    model: str = ""
    max_regression: float | None = None
    shared_items: int = 0
    current_items: int = 0
    baseline_items: int = 0
    failed: bool = False
    reason: str = ""
    comparisons: list[Comparison] = Field(default_factory=list)
    max_slowdown: float | None = None
    speed: list[SpeedChange] = Field(default_factory=list)


class VerdictEntry(_Model):
    """The run's verdict: the word (PASS, FAIL, INCOMPLETE, CRASHED, NOT EVALUATED), the
    exit status, and one line per reason it did not pass."""

    word: str
    reasons: list[str] = Field(default_factory=list)
    status: int | None = None


class Decision(Protocol):
    """What :meth:`RunRecord.decided` writes into a record: the verdict's findings
    (``plugins.verdict.Verdict`` is one): the gates as their entries, the other sections
    as their JSON data."""

    @property
    def aggregates(self) -> Mapping[str, Any]: ...
    @property
    def speed(self) -> Mapping[str, SpeedStats]: ...
    @property
    def gates(self) -> list[GateEntry]: ...
    @property
    def baseline(self) -> dict[str, Any] | None: ...
    @property
    def complete(self) -> bool: ...
    @property
    def status(self) -> int: ...
    def entry(self) -> dict[str, Any]: ...


class RescoreOf(_Model):
    run_id: str = ""
    path: str = ""
    complete: bool = True


class MergedShard(_Model):
    path: str
    run_id: str | None = None
    shard: str | None = None
    items: int = 0
    duration_s: float | None = None


class RunRecord(_Model):
    """A whole run record (see the module docstring; field by field in the JSON Schema)."""

    schema_version: int
    run_id: str
    started_at: str = ""
    duration_s: float = 0.0
    complete: bool = False
    exit_status: int = 0
    pytest_exit_status: int = 0
    interrupted: str | None = None
    stopped: str | None = None
    usage_errors: list[str] = Field(default_factory=list)
    crashes: list[Crash] = Field(default_factory=list)
    other_failures: list[str] = Field(default_factory=list)
    other_tests: list[OtherTest] = Field(default_factory=list)
    suites_skipped: dict[str, str] = Field(default_factory=dict)
    output_errors: list[str] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    data: dict[str, Any] | None = None
    code: dict[str, Any] = Field(default_factory=dict)
    model: dict[str, Any] = Field(default_factory=dict)
    judge: dict[str, Any] | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    selection: Selection = Field(default_factory=Selection)
    subset: dict[str, Any] | None = None  # version 1 only (now selection.deselected)
    suites: dict[str, SuiteInfo] = Field(default_factory=dict)
    counts: Counts = Field(default_factory=Counts)
    items: list[ItemEntry] = Field(default_factory=list)
    endpoints: dict[str, dict[str, Any]] | None = None
    # chat and instruct models: answers the parsing rules finished, per rule,
    # and each suite's final messages (fixtures.models.chat.chat_facts)
    chat: dict[str, Any] | None = None
    rescore_of: RescoreOf | None = None
    merged_from: list[MergedShard] | None = None
    merged_at: str | None = None
    aggregates: dict[str, Aggregate] = Field(default_factory=dict)
    speed: dict[str, SpeedStats] = Field(default_factory=dict)
    gates: list[GateEntry] = Field(default_factory=list)
    baseline: Baseline | None = None
    artifacts: list[str] = Field(default_factory=list)
    verdict: VerdictEntry | None = None

    def decided(self, verdict: Decision) -> RunRecord:
        """This record holding ``verdict``: aggregates, gates, baseline, completeness,
        exit status and the verdict's words."""
        return self.model_copy(
            update={
                "aggregates": {
                    k: Aggregate.model_validate(v) for k, v in verdict.aggregates.items()
                },
                "speed": dict(verdict.speed),
                "gates": list(verdict.gates),
                "baseline": Baseline.model_validate(verdict.baseline) if verdict.baseline else None,
                "complete": verdict.complete,
                "exit_status": verdict.status,
                "verdict": VerdictEntry.model_validate(verdict.entry()),
            }
        )

    def as_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data, the optional sections left out when absent."""
        data = self.model_dump(mode="json")
        for key in _OPTIONAL:
            if data.get(key) is None:
                data.pop(key, None)
        return data


_OPTIONAL = (
    "judge", "subset", "endpoints", "rescore_of", "merged_from", "merged_at",
    "baseline", "verdict", "data", "chat",
)  # fmt: skip


def new_run_id(now: datetime | None = None) -> str:
    """A sortable unique run id such as ``20261122T104500Z-3f9a1c``."""
    now = now or datetime.now(UTC)
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def item_counts(items: list[ItemEntry], expected: int, not_run: int = 0) -> Counts:
    """The record's ``counts`` for these items; ``expected``: items the run selected;
    ``failed``: every item not scored (:func:`outcome_counts`); ``not_run``: items an
    early stop left out."""
    outcomes = outcome_counts(items)
    calls = [c for it in items for c in it.calls]
    return Counts(
        items=len(items),
        expected=expected,
        scored=outcomes.scored,
        failed=outcomes.failed + outcomes.skipped,
        not_run=not_run,
        calls=len(calls),
        cached_calls=sum(bool(c.get("cached", False)) for c in calls),
    )
