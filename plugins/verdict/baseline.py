"""Compare a run record with a baseline record: paired deltas, CIs and regression verdicts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from extractbench.plugins.record.values import Comparison
from extractbench.plugins.verdict.stats import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    cluster_bootstrap_interval,
)
from extractbench.suites.registry import Registry
from extractbench.suites.suite_options import SuiteOptions, dump_options

if TYPE_CHECKING:
    from extractbench.plugins.record import RunRecord

__all__ = [
    "compare_records", "paired_bootstrap", "baseline_section", "partial_baseline",
    "protocol_changes", "item_scores", "compared_metrics", "version_changes", "Protocol",
    "incomparable", "incomparable_line", "incomparable_records",
]  # fmt: skip


def paired_bootstrap(
    diffs: np.ndarray,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    groups: Sequence[str] | None = None,
) -> tuple[float, float]:
    """Percentile 95% interval of the mean of paired differences (Efron & Tibshirani 1993).

    Items are resampled with replacement as pairs, so per-item difficulty cancels out.
    Where items share groups (a document's fields, answered from one prompt: ``groups``
    with at least two and fewer distinct ids than items), whole groups of pairs are
    resampled instead (:func:`plugins.verdict.stats.cluster_bootstrap_interval`, Davison &
    Hinkley 1997 section 3.8): the differences of one document move together, and an
    interval over items would be too narrow (``tests/test_cluster_intervals.py``). One
    group gives no spread between groups and keeps the items' interval.

    Args:
        diffs: shape (n,), n >= 1, per-item current - baseline.
        groups: each difference's group id in the same order, or None: every item its own.

    Returns:
        (low, high), in the metric's unit.
    """
    if groups is not None and 2 <= len(set(groups)) < diffs.size:
        return cluster_bootstrap_interval(diffs.tolist(), list(groups), resamples, seed)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, diffs.size, size=(resamples, diffs.size))
    low, high = np.percentile(diffs[idx].mean(axis=1), [2.5, 97.5])
    return float(low), float(high)


@dataclass(frozen=True)
class Protocol:
    """What one side of a baseline comparison was measured with, per suite: what decides
    whether its scores can be compared with another run's (:func:`incomparable`).

    Attributes:
        suites: the suites it scored (a run not yet started: every suite it may score).
        versions: suite -> its version (:attr:`suites.protocol.Suite.version`; None: not
            recorded).
        options: suite -> option name -> JSON value (a record's ``settings.suite_options``).
        fields: suite -> the option names that decide what its scores mean (its
            ``Options.protocol_fields``, a record's ``settings.protocol_options``); a suite
            absent: not recorded.
    """

    suites: frozenset[str]
    versions: Mapping[str, int | None]
    options: Mapping[str, Mapping[str, Any]]
    fields: Mapping[str, tuple[str, ...]]

    @classmethod
    def of_run(
        cls, versions: Mapping[str, int | None], options: Mapping[str, SuiteOptions]
    ) -> Protocol:
        """A run about to start: every registered suite (``versions``: suite -> its
        version) with its parsed ``options``."""
        return cls(
            frozenset(versions), dict(versions),
            {name: dump_options(value) for name, value in options.items()},
            {name: type(value).protocol_fields for name, value in options.items()},
        )  # fmt: skip

    @classmethod
    def of_record(cls, record: RunRecord) -> Protocol:
        """A run record: the suites of its scored items, their versions, options and
        protocol option names as recorded."""
        fields = record.settings.get("protocol_options") or {}
        return cls(
            frozenset(it.suite for it in record.items if it.outcome == "passed"),
            {name: info.version for name, info in record.suites.items()},
            record.settings.get("suite_options") or {},
            {name: tuple(names) for name, names in fields.items()},
        )  # fmt: skip


class _Unset:
    """An option neither a record nor this installation gives a value for."""

    def __repr__(self) -> str:
        return "unset"


_UNSET = _Unset()


def protocol_changes(
    current: Protocol,
    baseline: Protocol,
    suites: Iterable[str],
    option_types: Mapping[str, type[SuiteOptions]],
    current_name: str = "this run",
) -> list[str]:
    """The protocol options (a suite's ``Options.protocol_fields``: its prompt, budget,
    metric...) whose value differs between the current side and the baseline, for each of
    ``suites``: ``kv.metric: 'contains' in the baseline, 'exact' in this run``.

    A suite's protocol options are those its ``Options`` here declares and those either
    side recorded; for a suite neither this installation nor a record describes, every
    option either side recorded counts (which decide its scores is not known, so the check
    fails closed). An option a side lacks (a record older than the option) had its default
    (this installation's ``Options``; ``unset`` for a suite it does not know).

    Args:
        current, baseline: the two sides (:class:`Protocol`).
        suites: the suites to check.
        option_types: suite -> its ``Options`` model in this installation.
        current_name: how the lines name the current side.

    Returns:
        One line per differing option, by suite (sorted) and option (declaration order);
        empty when the protocols agree.
    """
    changes = []
    for suite in sorted(suites):
        model = option_types.get(suite)
        now, then = current.options.get(suite) or {}, baseline.options.get(suite) or {}
        described = model is not None or suite in current.fields or suite in baseline.fields
        names = (
            [*(model.protocol_fields if model else ()), *current.fields.get(suite, ()),
             *baseline.fields.get(suite, ())]
            if described else [*now, *then]
        )  # fmt: skip
        default = dump_options(model()) if model is not None else {}
        for name in dict.fromkeys(names):
            was = then.get(name, default.get(name, _UNSET))
            value = now.get(name, default.get(name, _UNSET))
            if was != value:
                changes.append(
                    f"{suite}.{name}: {was!r} in the baseline, {value!r} in {current_name}"
                )
    return changes


def version_changes(
    current: Mapping[str, int | None],
    baseline_versions: Mapping[str, int | None],
    suites: Iterable[str],
    current_name: str = "this run",
) -> list[str]:
    """The suites whose version (:attr:`suites.protocol.Suite.version`) differs between the
    baseline and the current run, for each of ``suites`` (those both hold): a changed
    suite's items, prompt or scoring make its scores incomparable. A version missing on
    either side (a record written before suites declared one) counts as a difference: what
    that run scored cannot be shown to be the same suite, so the check fails closed.

    Args:
        current: suite -> its version in the current run (the registry's, or a record's).
        baseline_versions: suite -> the version the baseline record holds (None: none).
        suites: the suites to check (scored in the baseline, run by the current side); one
            ``current`` lacks counts as unversioned.
        current_name: how the lines name the current side.

    Returns:
        One line per suite, sorted: ``fda: suite version 1 in the baseline, 2 in this
        run``; empty when every version agrees.
    """
    changes = []
    for suite in sorted(suites):
        then, now = baseline_versions.get(suite), current.get(suite)
        if then is None or now is None:
            older = "the baseline" if then is None else current_name
            changes.append(
                f"{suite}: no suite version in {older} (a record older than suite versions)"
            )
        elif then != now:
            changes.append(
                f"{suite}: suite version {then} in the baseline, {now} in {current_name}"
            )
    return changes


def incomparable(
    current: Protocol,
    baseline: Protocol,
    option_types: Mapping[str, type[SuiteOptions]],
    current_name: str = "this run",
) -> list[str]:
    """Every reason the baseline's scores cannot be compared with the current side's,
    over the suites both scored (the current side: a run not yet started may score any
    of its suites): each suite version (:func:`version_changes`) and protocol option
    (:func:`protocol_changes`) that differs. What ``--baseline`` (pytest, ``report``,
    ``merge``) and ``extractbench compare`` refuse unless ``--allow-incomparable-baseline``.

    Args:
        current, baseline: the two sides; option_types, current_name: see
            :func:`protocol_changes`.

    Returns:
        The version lines, then the option lines; empty when the two are comparable.
    """
    suites = current.suites & baseline.suites
    return version_changes(current.versions, baseline.versions, suites, current_name) + (
        protocol_changes(current, baseline, suites, option_types, current_name)
    )


def incomparable_records(current: RunRecord, baseline: RunRecord, current_name: str) -> list[str]:
    """:func:`incomparable` of two run records, each suite's protocol options and their
    defaults read from this installation's suites (:meth:`suites.registry.Registry.installed`)
    and the records' ``settings.protocol_options``.

    Args:
        current: the record compared (``report``'s, the merged shards', ``compare``'s NEW).
        baseline: the ``--baseline`` record (``compare``'s OLD).
        current_name: how the lines name ``current``.
    """
    types = {name: suite.options for name, suite in Registry.installed().suites.items()}
    return incomparable(
        Protocol.of_record(current), Protocol.of_record(baseline), types, current_name
    )


def incomparable_line(where: str, changes: Sequence[str]) -> str:
    """The one line that refuses an incomparable baseline: ``where`` (``--baseline
    OLD.json``) and every difference of :func:`incomparable`."""
    return (
        f"{where}: measured with another protocol ({'; '.join(changes)}): its scores are not "
        "comparable; run both with the same suite versions and options, or pass "
        "--allow-incomparable-baseline to compare anyway"
    )


def item_scores(record: Mapping[str, Any]) -> dict[str, dict[str, float]]:
    """``suite/metric -> item id -> score`` over a record's scored items (``outcome``
    passed, the score not None): what :func:`compare_records` pairs.

    Args:
        record: a run record as JSON data (its ``items``).
    """
    out: dict[str, dict[str, float]] = {}
    for item in record.get("items", []):
        if item.get("outcome", "passed") != "passed":
            continue
        for metric, value in item.get("scores", {}).items():
            if value is not None:
                out.setdefault(f"{item['suite']}/{metric}", {})[item["id"]] = float(value)
    return out


def compared_metrics(baseline: RunRecord, suite: str) -> list[str]:
    """The metrics (without the suite prefix) of ``suite`` that ``baseline`` scored on some
    item: those a regression check against it compares (:func:`compare_records`)."""
    return sorted(
        {
            metric
            for it in baseline.items
            if it.suite == suite and it.outcome == "passed"
            for metric, value in it.scores.items()
            if value is not None
        }
    )


def compare_records(
    current: Mapping[str, Any], baseline: Mapping[str, Any], max_regression: float | None
) -> list[Comparison]:
    """Compare every metric present in either record: per metric the mean paired
    difference over the shared items and its 95% interval (:func:`paired_bootstrap`, over
    the current record's groups of those items where they share some).

    Args:
        current, baseline: run records (see :mod:`plugins.record`).
        max_regression: largest tolerated drop of a mean (metric units); None reports
            deltas without failing.

    Returns:
        One :class:`Comparison` per ``suite/metric``, sorted by metric.
    """
    cur, base = item_scores(current), item_scores(baseline)
    group_of = {
        item["id"]: str(item["group"])
        for item in current.get("items", [])
        if item.get("group") is not None
    }  # fmt: skip
    results = []
    for metric in sorted(set(cur) | set(base)):
        c, b = cur.get(metric, {}), base.get(metric, {})
        shared = sorted(set(c) & set(b))
        c_mean = float(np.mean(list(c.values()))) if c else None
        b_mean = float(np.mean(list(b.values()))) if b else None
        if not shared:
            results.append(
                Comparison(
                    metric=metric,
                    current=c_mean,
                    baseline=b_mean,
                    delta=None,
                    ci_low=None,
                    ci_high=None,
                    n_shared=0,
                    only_current=len(c),
                    only_baseline=len(b),
                    verdict="not comparable",
                    failed=False,
                )  # fmt: skip
            )
            continue
        diffs = np.array([c[i] - b[i] for i in shared])
        delta = float(diffs.mean())
        groups = [group_of.get(i, i) for i in shared]
        low, high = paired_bootstrap(diffs, groups=groups)
        if high < 0:
            verdict = "regression"
        elif low > 0:
            verdict = "improvement"
        else:
            verdict = "no significant change"
        failed = max_regression is not None and delta < -max_regression and high < 0
        results.append(
            Comparison(
                metric=metric,
                current=c_mean,
                baseline=b_mean,
                delta=delta,
                ci_low=float(low),
                ci_high=float(high),
                n_shared=len(shared),
                only_current=len(set(c) - set(b)),
                only_baseline=len(set(b) - set(c)),
                verdict=verdict,
                failed=bool(failed),
            )  # fmt: skip
        )
    return results


def baseline_section(
    current: Mapping[str, Any],
    baseline: Mapping[str, Any],
    max_regression: float | None,
    allow_incomparable: bool = False,
    allow_partial: bool = False,
) -> dict[str, Any]:
    """The run record's ``baseline`` section: every comparison plus the overlap.

    A baseline that shares no scored item with the run cannot show a regression, so it
    fails the run (``failed`` True) unless ``allow_incomparable`` is set. With
    ``max_regression`` set, so does one that shares no scored item of a suite the run
    scored (that suite's regression checks could never fail) unless ``allow_partial`` is
    set; a partial overlap within a suite is reported by its count (``shared_items``).

    Args:
        current, baseline: run records (only ``items`` is read from ``current``).
        max_regression: see :func:`compare_records`.
        allow_incomparable: accept a baseline without shared items
            (``--allow-incomparable-baseline``).
        allow_partial: accept a baseline without a suite of the run
            (``--allow-partial-baseline``).

    Returns:
        JSON-safe dict: ``run_id``, ``model``, ``max_regression``, ``shared_items``,
        ``current_items``, ``baseline_items``, ``failed``, ``reason``, ``comparisons``.
    """
    scored = [it for it in current.get("items", []) if it.get("outcome", "passed") == "passed"]
    ids = {it["id"] for it in scored}
    base_ids = {
        it["id"] for it in baseline.get("items", []) if it.get("outcome", "passed") == "passed"
    }
    shared = len(ids & base_ids)
    failed = shared == 0 and not allow_incomparable
    reason = (
        f"{shared} items shared ({len(ids)} in this run, {len(base_ids)} in the baseline)"
        if shared
        else f"not comparable: no item shared ({len(ids)} in this run, {len(base_ids)} in "
        "the baseline)"
        + ("; allowed by --allow-incomparable-baseline" if allow_incomparable else "")
    )
    lacking = sorted(
        {it["suite"] for it in scored} - {it["suite"] for it in scored if it["id"] in base_ids}
    )
    if shared and lacking and max_regression is not None:
        failed = not allow_partial
        reason = (
            f"lacks {', '.join(lacking)}: no scored item of it shared, so its regression "
            f"checks are not comparable; {reason}; "
            + ("allowed by --allow-partial-baseline" if allow_partial
               else "--allow-partial-baseline accepts that")
        )  # fmt: skip
    return {
        "run_id": baseline.get("run_id", ""),
        "model": baseline.get("model", {}).get("name", ""),
        "max_regression": max_regression,
        "shared_items": shared,
        "current_items": len(ids),
        "baseline_items": len(base_ids),
        "failed": failed,
        "reason": reason,
        "comparisons": [
            c.model_dump() for c in compare_records({"items": scored}, baseline, max_regression)
        ],
    }


def partial_baseline(
    baseline: RunRecord, path: str, max_regression: float | None, allow_partial: bool
) -> str | None:
    """Why ``baseline`` cannot be the baseline of a regression check, as one usage line;
    None when it can. A record of part of a run (incomplete, stopped early by
    ``--stop-when-decided``, or one shard) would test every later run for regressions over
    its few items only: refused with ``--max-regression`` unless ``allow_partial``
    (``--allow-partial-baseline``). Without ``--max-regression`` the comparison is only
    reported, so any record may be read.

    Args:
        baseline: the ``--baseline`` record; path: its path as given.
    """
    if max_regression is None or allow_partial:
        return None
    counts = baseline.counts
    if baseline.selection.shard:
        what = f"one shard ({baseline.selection.shard}) of a run"
    elif counts.not_run:
        what = (
            f"stopped early (--stop-when-decided): {counts.items} of {counts.expected} "
            "selected items ran"
        )
    elif not baseline.complete:
        what = f"incomplete: {counts.items} of {counts.expected} selected items finished"
    else:
        return None
    return (
        f"--baseline {path}: the record is {what}; a regression test against it covers "
        "only those items. Give the record of a complete run (or the merge of every "
        "shard), or pass --allow-partial-baseline"
    )
