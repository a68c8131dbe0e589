"""What the reports say about each metric of a run record beside its numbers: the scale it
is read on, whether the model under test judged it itself, and which items scored nothing.

The suites declare the facts (``Suite.ranges``, ``Suite.judged``); the record says what
happened (an item's ``details["self_judged"]``). The terminal, the HTML page and the plots
read them from one :class:`MetricFacts`, made once per output by :func:`metric_facts`.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from extractbench.plugins.outputs.eee_samples import lower_is_better
from extractbench.plugins.record import Aggregate, ItemEntry, RunRecord
from extractbench.suites.registry import Registry

__all__ = [
    "Scale",
    "MetricFacts",
    "metric_facts",
    "scale_of",
    "UNIT",
    "MIN_INTERVAL_N",
    "MIN_PLOT_N",
    "TOO_SMALL",
    "interval_shown",
    "suite_order",
    "small_suites",
]

# The reports show no 95% interval of fewer items: a Wilson interval of n = 1 spans most
# of [0, 1] and a bootstrap of n = 1 is one point, both read as a result. The record keeps
# the numbers (a gate reads them there).
MIN_INTERVAL_N = 10
# no chart is drawn from fewer items (a histogram or a bar of 1-19 items is noise)
MIN_PLOT_N = 20
TOO_SMALL = "n too small"


def interval_shown(n: int | None) -> bool:
    """Whether a report shows the 95% interval of ``n`` items (:data:`MIN_INTERVAL_N`)."""
    return n is not None and n >= MIN_INTERVAL_N


def small_suites(aggregates: Mapping[str, Aggregate], own: Collection[str]) -> set[str]:
    """The public suites (not in ``own``) whose every metric has fewer than
    :data:`MIN_INTERVAL_N` items: the reports fold them (one terminal row, their own tables
    left to the HTML page, a folded HTML table)."""
    by_suite: dict[str, list[Aggregate]] = {}
    for key, agg in aggregates.items():
        by_suite.setdefault(key.split("/", 1)[0], []).append(agg)
    return {
        suite
        for suite, aggs in by_suite.items()
        if suite not in own and not any(interval_shown(a.n) for a in aggs)
    }


def suite_order(suites: Iterable[str], own: Collection[str]) -> list[str]:
    """``suites`` in the order the reports show them: a team's own suites (``own``: those
    that read the project's data) first, then the public ones, each group by name."""
    return sorted(set(suites), key=lambda name: (name not in own, name))


@dataclass(frozen=True)
class Scale:
    """A group of metrics read on one axis.

    Attributes:
        key: a file-name-safe name (``unit``, ``0-100``, ``count``).
        label: what the axis shows (``scores 0-1``, ``scale 0-100 (BLEU-like)``, ``counts``).
        low, high: the axis' bounds (``high`` None: open, counts).
    """

    key: str
    label: str
    low: float
    high: float | None


UNIT = Scale("unit", "scores 0-1", 0.0, 1.0)


def scale_of(low: float, high: float) -> Scale:
    """The scale of a metric whose declared range is [low, high] (``Suite.score_range``).

    Every metric whose upper bound is 1 shares the 0-1 axis (a similarity that can go below
    0 included: its axis starts at its lowest value); an open upper bound is a count; any
    other finite bound (Struc-Bench's 0-4 H-Score, 0-10 P-Score, 0-100 SacreBLEU) is an axis
    of its own, since on one shared axis the 0-1 bars would not be seen.
    """
    if high == 1.0:
        return UNIT
    if math.isinf(high):
        return Scale("count", "counts and open-ended values", 0.0, None)
    label = f"scale 0-{high:g}" + (" (BLEU-like)" if high == 100.0 else "")
    return Scale(f"0-{high:g}", label, min(0.0, low) if math.isfinite(low) else 0.0, high)


@dataclass(frozen=True)
class MetricFacts:
    """Facts about the metrics of one record (see the module docstring).

    Attributes:
        scales: ``suite/metric`` -> its :class:`Scale`, for every aggregate and item score.
        self_judged: the ``suite/metric`` keys the model under test judged itself (a metric
            the suite declares ``judged`` on at least one item whose ``details`` say
            ``self_judged``).
        own_suites: the suites of the record that read the project's own data (run on
            request, ``kv``): the reports show them first.
    """

    scales: dict[str, Scale] = field(default_factory=dict)
    self_judged: frozenset[str] = frozenset()
    own_suites: frozenset[str] = frozenset()

    def scale(self, key: str) -> Scale:
        """The scale of ``suite/metric`` (0-1 when the record's suite is unknown)."""
        return self.scales.get(key, UNIT)

    def is_zero(self, item: ItemEntry) -> bool:
        """Whether ``item`` passed yet scored nothing: it has a score on a metric where
        higher is better, and every such score is at most 0 (an error count of 0 is no
        failure and does not count)."""
        if item.outcome != "passed":
            return False
        better = [v for m, v in item.scores.items() if v is not None and not lower_is_better(m)]
        return bool(better) and all(v <= 0.0 for v in better)


def metric_facts(record: RunRecord, registry: Registry | None) -> MetricFacts:
    """The :class:`MetricFacts` of ``record``; the suites are found by name in ``registry``
    (never by a name read from the record); without it every metric is on the 0-1 scale
    and none is marked self-judged."""
    keys = set(record.aggregates)
    keys |= {f"{it.suite}/{m}" for it in record.items for m in it.scores}
    scales: dict[str, Scale] = {}
    judged: set[str] = set()
    suites = registry.suites if registry is not None else {}
    for key in sorted(keys):
        suite_name, metric = key.split("/", 1) if "/" in key else (key, "")
        suite = suites.get(suite_name)
        scales[key] = scale_of(*suite.score_range(metric)) if suite is not None else UNIT
    for item in record.items:
        suite = suites.get(item.suite)
        if suite is None or not suite.judged or not item.details.get("self_judged"):
            continue
        for metric in item.scores:
            if any(fnmatch.fnmatchcase(metric, p) for p in suite.judged):
                judged.add(f"{item.suite}/{metric}")
    own = {name for name in record.suites if (spec := suites.get(name)) and spec.on_request}
    return MetricFacts(scales, frozenset(judged), frozenset(own))
