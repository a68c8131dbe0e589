"""Gates decided as a suite's items arrive (``--stop-when-decided``): each gate on a mean
is decided the first time the anytime-valid confidence sequence of its metric
(:class:`plugins.verdict.sequential.HedgedCS`) lies wholly on one side of its threshold.

The items run in a random order of their groups (a group: items that share a prompt
prefix, FDA's document chunk; most suites' groups are single items), so the draws are
the groups, without replacement from the suite's ``G`` groups. A group's draw is its
items' scores summed, scaled to the metric's range and divided by the largest group's
size ``k``: a value in [0, 1] whose mean over the groups is the suite's mean times
``N / (G k)``, so the sequence of one is the sequence of the other, rescaled (exactly the
paper's sequence when every group is one item); the bounds are also cut to what the
items not yet run could still make of the mean. The sequence holds at every ``n`` at
once, so deciding at the first ``n`` where it clears the threshold keeps each gate's
error within its level; and it is the running intersection, so a gate, once decided,
stays decided. After the last group the bounds are the suite's mean itself: a gate that
was never decided early is decided at ``n = N`` exactly as a fixed-n gate on the mean.

A gate on an interval's bound (``accuracy:ci_low >= 0.15``, ``:ci_high <= x``) asks what a
fixed-n interval asks: is the mean of the distribution the items come from past the
threshold, not the mean of this finite list. It is decided by the i.i.d. (with
replacement) sequence of the same group draws (``HedgedCS(population=None)``): PASS once
its bound on the gate's side clears the threshold, FAIL once its other bound shows the
mean is on the wrong side. The level is split between the looks: the sequence spends
``alpha / 2`` per side, and a gate it leaves open after the last group is not decided by
it: the verdict decides it on the fixed-n 95% interval at n = N (``alpha / 2`` per side,
the gate's meaning without the option), so the gate's error stays within ``alpha`` per
side and a suite that runs to its end gets the fixed-n gate's answer. The group draws are
rescaled to the items' mean with the suite's own ratio of items to groups, as for the
mean.

Error levels: ``alpha`` per side of each gate. A wrong PASS (the lower bound clears a
``>=`` threshold the suite's mean is below) and a wrong FAIL (the upper bound falls below
a threshold the mean meets) each happen with probability at most ``alpha``: the sequence
is the two-sided ``(1 - 2 alpha)`` one, whose hedge (``theta = 1/2``) spends ``alpha`` on
each side (Ville's inequality on ``K^+`` and ``K^-`` separately: ``P(sup theta K^+ >=
1 / (2 alpha)) <= alpha``).

While ``n`` is below a minimum n (``fda:n>=30``) no gate is decided early (a stopping rule
on what was drawn: the sequence stays valid). The decision records which levels of the
suite's first breakdown attribute (FDA's keys) its items covered, and how many items of
each (``GateSequence.strata``); the sequence bounds the whole suite's mean whatever levels
were drawn, so no level is waited for. A group with a failed item or an
unscored gated metric ends the sequence: the suite then runs to the end and its gates are
decided as without ``--stop-when-decided``.

A regression check against a baseline (``--baseline B --max-regression D``) is decided by
its own sequence, one per compared metric: over the suite's items the baseline scored (a
finite population of ``N`` shared items), the per-item difference ``current - baseline``
scaled by the metric's range lies in [-1, 1] and is mapped to ``(d + 1) / 2`` in [0, 1]; the
groups holding shared items are drawn in run order without replacement (one update per
group, as for a gate), and the without-replacement sequence bounds the mean difference over
all ``N`` shared items. "No regression" once its lower bound is above ``-D``, "regression"
once its upper bound is below ``-D``, each wrong with probability at most ``alpha``; a
check still open when every shared item ran is left to the full-run rule
(:func:`plugins.verdict.baseline.compare_records`: ``delta < -D`` and the paired bootstrap's
upper bound below 0), exactly as without the option.

The live run's controller (:mod:`plugins.run.early_stop`) and :func:`plugins.verdict.decide`
feed the same :class:`SuiteSequence`, one from the arriving items, the other from the
run record, so both reach the same decision.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from extractbench.plugins.record import GateEntry
from extractbench.plugins.record.values import GateSequence, RunOrder
from extractbench.plugins.verdict.counts import DATA_FIGURES
from extractbench.plugins.verdict.gates import Gate
from extractbench.plugins.verdict.sequential import METHOD, METHOD_IID, HedgedCS

__all__ = [
    "SuiteSequence", "sequential_gate", "known_before_items", "group_draw", "item_bounds",
    "decided_by", "mark_stopped_early", "replay", "Regression", "RegressionDecision",
    "regression_of", "decided_comparison", "paired_value", "difference_bounds",
    "paired_sequence", "stopped_bounds", "metric_range", "ANYTIME", "NO_INTERVAL",
]  # fmt: skip

ALPHA = 0.05  # each side's error level of a gate: a wrong PASS, and a wrong FAIL, at most 5%


# an interval gate the i.i.d. sequence decides: its bound, on the side the gate asks for
INTERVAL_SIDES = {("ci_low", ">="), ("ci_low", ">"), ("ci_high", "<="), ("ci_high", "<")}


def sequential_gate(gate: Gate, ranges: Mapping[str, Sequence[float]]) -> bool:
    """Whether ``gate`` can be decided by a sequence: a gate on the mean, or a lower
    (``:ci_low >=``) or upper (``:ci_high <=``) bound of it, of a metric whose declared
    range is finite."""
    metric = gate.metric.partition("/")[2]
    bounds = ranges.get(metric)
    kind = gate.stat == "mean" or (gate.stat, gate.op) in INTERVAL_SIDES
    return kind and bounds is not None and all(map(math.isfinite, bounds))


def known_before_items(gate: Gate) -> bool:
    """Whether ``gate`` is on a count of the suite's data (``kv/missing_labels``), known when
    the data is read, before the first item runs: it needs no item, so it never holds an
    early stop back (the verdict decides it from the suite's facts)."""
    return gate.metric.partition("/")[2] in DATA_FIGURES


def _verdict(op: str, threshold: float, low: float, high: float) -> bool | None:
    """PASS when every mean in [low, high] meets ``op threshold``, FAIL when none does
    (checked first: an empty interval fails), else None."""
    meets = {
        ">=": (low >= threshold, high < threshold),
        ">": (low > threshold, high <= threshold),
        "<=": (high <= threshold, low > threshold),
        "<": (high < threshold, low >= threshold),
    }
    passed, failed = meets[op]
    return False if failed else True if passed else None


def group_draw(sums: np.ndarray, largest: int) -> np.ndarray:
    """A group's draw: its items' scores (each scaled to [0, 1]) summed and divided by the
    largest group's size ``largest`` (a value in [0, 1]).

    Args:
        sums: shape ``(runs,)``: each run's group's sum.
        largest: ``k``, the items of the suite's largest group.
    """
    return np.clip(sums / largest, 0.0, 1.0)


def item_bounds(
    cs: HedgedCS,
    totals: np.ndarray,
    n: int | np.ndarray,
    groups: int,
    population: int,
    largest: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The sequence of the groups' draws (:func:`group_draw`) as bounds on the items' mean,
    in [0, 1]: the draws' mean is the items' mean times ``N / (G k)``, so their bounds are
    scaled by ``G k / N``; a without-replacement sequence's are also cut to what the items
    not yet run could make of the mean (``[S / N, (S + N - n) / N]``).

    Args:
        cs: the groups' sequence (``population`` G, or None: i.i.d.), after the groups so far.
        totals: shape ``(runs,)``: the sum of the items' scaled scores so far.
        n: the items so far (a count, or shape ``(runs,)``); groups: G; population: N,
            the items; largest: k.

    Returns:
        (low, high), each shape ``(runs,)``.
    """
    scale = groups * largest / population
    low, high = cs.low * scale, np.minimum(cs.high * scale, 1.0)
    if cs.population is not None:
        low = np.maximum(low, totals / population)
        high = np.minimum(high, (totals + population - n) / population)
    return low, high


@dataclass(frozen=True)
class Decision:
    """A gate decided by its sequence: ``passed`` and the :class:`GateSequence`."""

    passed: bool
    sequence: GateSequence


@dataclass(frozen=True)
class Regression:
    """A regression check of one suite against a baseline (``--baseline --max-regression``).

    Attributes:
        max_regression: ``D``, the largest tolerated drop of a mean, in the metric's unit.
        baseline: metric (without the suite prefix) -> item id -> the baseline's score, over
            the baseline's scored items (what :func:`plugins.verdict.baseline.compare_records`
            pairs).
    """

    max_regression: float
    baseline: Mapping[str, Mapping[str, float]]


def regression_of(
    scores: Mapping[str, Mapping[str, float]], suite: str, max_regression: float | None
) -> Regression | None:
    """``suite``'s :class:`Regression` from a baseline's ``suite/metric -> id -> score``
    (:func:`plugins.verdict.baseline.item_scores`), or None without ``max_regression``."""
    if max_regression is None:
        return None
    prefix = f"{suite}/"
    return Regression(
        max_regression,
        {k.removeprefix(prefix): v for k, v in scores.items() if k.startswith(prefix)},
    )


@dataclass(frozen=True)
class RegressionDecision:
    """A regression check decided by its sequence: ``failed`` (a regression beyond ``D``)
    and the :class:`GateSequence` of the mean difference (its ``n`` and ``population``
    count shared items; ``low``, ``high`` and ``mean`` are of ``current - baseline`` in the
    metric's unit)."""

    failed: bool
    sequence: GateSequence


def paired_value(current: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """An item's paired difference mapped into [0, 1]: ``(d + 1) / 2`` with
    ``d = current - baseline`` in [-1, 1] (both scores scaled to [0, 1] by the metric's
    range), the values the hedged capital process takes."""
    return (np.asarray(current, dtype=float) - np.asarray(baseline, dtype=float) + 1) / 2


def difference_bounds(
    cs: HedgedCS,
    totals: np.ndarray,
    n: int | np.ndarray,
    groups: int,
    population: int,
    largest: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The paired sequence's bounds on the mean difference over every shared item, in
    [-1, 1]: :func:`item_bounds` of the groups' :func:`paired_value` sums (``totals``),
    mapped back by ``d = 2 v - 1``.

    Args:
        cs: the without-replacement sequence over the ``groups`` groups with shared items.
        totals: shape ``(runs,)``: the sum of the shared items' paired values so far.
        n: the shared items so far; population: N, the shared items; largest: the most
            shared items of one group.

    Returns:
        (low, high), each shape ``(runs,)``.
    """  # fmt: skip
    low, high = item_bounds(cs, totals, n, groups, population, largest)
    return 2 * low - 1, 2 * high - 1


def paired_sequence(groups: int, alpha: float = ALPHA, runs: int = 1) -> HedgedCS:
    """The paired sequence of a regression check: the two-sided ``1 - 2 alpha`` sequence
    for sampling the ``groups`` groups with shared items without replacement (the mean
    difference over a finite list of shared items: at ``n = N`` its bounds are that mean)."""
    return HedgedCS(max(groups, 1), 2 * alpha, runs=runs)


class _PairedSequence:
    """The without-replacement sequence of one metric's mean paired difference over the
    shared items (see the module docstring); its draws are the groups holding shared
    items, each ``sum((d_i + 1) / 2) / k`` over the group's shared items, ``k`` the most
    shared items of a group."""

    def __init__(
        self,
        groups: Sequence[Sequence[str]],
        baseline: Mapping[str, float],
        scale: Sequence[float],
        alpha: float,
    ) -> None:
        low, high = scale
        # the baseline's scores scaled to [0, 1] as the run's are (a score outside its
        # declared range fails its item, so none is expected here)
        self.baseline = {
            i: min(max((b - low) / (high - low), 0.0), 1.0) for i, b in baseline.items()
        }
        shared = [[i for i in group if i in baseline] for group in groups]
        self.groups = sum(1 for g in shared if g)
        self.population = sum(len(g) for g in shared)
        self.largest = max((len(g) for g in shared), default=1)
        self.cs = paired_sequence(self.groups, alpha)
        self.total = 0.0  # sum of (d_i + 1) / 2 so far
        self.diff = 0.0  # sum of d_i so far
        self.n = 0

    def take(self, values: Sequence[tuple[str, float]]) -> None:
        """A group's items (id, current score scaled to [0, 1]) in run order."""
        pairs = [(c, self.baseline[i]) for i, c in values if i in self.baseline]
        if not pairs:
            return  # no shared item: not one of this sequence's draws
        current, base = (np.array(v) for v in zip(*pairs, strict=True))
        shifted = math.fsum(paired_value(current, base))
        self.total += shifted
        self.diff += math.fsum(current - base)
        self.n += len(pairs)
        self.cs.update(group_draw(np.array([shifted]), self.largest))

    def bounds(self) -> tuple[float, float]:
        """The bounds of the mean difference over every shared item, scaled, in [-1, 1]."""
        low, high = difference_bounds(
            self.cs, np.array([self.total]), self.n, self.groups, self.population, self.largest
        )
        return float(low[0]), float(high[0])


class SuiteSequence:
    """The gates of one suite, decided as its groups complete in run order.

    Args:
        order: the suite's run order.
        gates: the suite's gates (those that are not :func:`sequential_gate` are kept out;
            a minimum n among them sets how many items a decision needs).
        alpha: the error level of each side of each gate (the sequence is the two-sided
            ``1 - 2 alpha`` one).
        regression: the suite's regression check against a baseline, or None: each metric
            the baseline scored on items of the suite gets its paired sequence (a metric
            without a finite range in ``order.ranges`` needs every item: the suite is then
            never decided early).
    """

    def __init__(
        self,
        order: RunOrder,
        gates: Iterable[Gate],
        alpha: float = ALPHA,
        regression: Regression | None = None,
    ) -> None:
        gates = list(gates)
        self.order, self.alpha = order, alpha
        self.gates = [g for g in gates if sequential_gate(g, order.ranges)]
        # a gate no sequence decides (a speed figure) needs every item
        self.others = [
            g for g in gates if g.stat != "n" and g not in self.gates and not known_before_items(g)
        ]
        self._floor = {
            g.expression: max((int(m.threshold) for m in gates if m.covers(g.metric)), default=0)
            for g in self.gates
        }
        self._group_of = {i: k for k, group in enumerate(order.groups) for i in group}
        sizes = [len(group) for group in order.groups]
        self.population = sum(sizes)
        self._scale = max(sizes, default=1)
        self._metrics = sorted({g.metric.partition("/")[2] for g in self.gates})
        self._cs = {m: HedgedCS(max(len(sizes), 1), 2 * alpha) for m in self._metrics}
        # half the level: the fixed-n interval at n = N spends the other half
        self._iid = {
            g.metric.partition("/")[2]: HedgedCS(None, alpha)
            for g in self.gates
            if g.stat != "mean"
        }
        self._sums = dict.fromkeys(self._metrics, 0.0)
        self.regression = regression
        self._paired: dict[str, _PairedSequence] = {}
        self.regressions: dict[str, RegressionDecision] = {}
        self.unpaired: list[str] = []  # compared metrics no sequence decides: every item runs
        for metric, scores in sorted((regression.baseline if regression else {}).items()):
            if not any(i in scores for i in self._group_of):
                continue  # no shared item: nothing to compare ("not comparable")
            if metric in order.ranges and all(map(math.isfinite, order.ranges[metric])):
                self._paired[metric] = _PairedSequence(
                    order.groups, scores, order.ranges[metric], alpha
                )
            else:
                self.unpaired.append(metric)
        self._arrived: dict[str, tuple[bool, Mapping[str, float | None], Any]] = {}
        self._strata: dict[str, int] = {}  # level of order.stratum -> items taken
        self.next_group = 0
        self.n = 0
        self.blocked: str | None = None
        self.decisions: dict[str, Decision] = {}

    @property
    def decided(self) -> bool:
        """Every gate of the suite is decided by its sequence (its other items need not
        run)."""
        return (
            bool(self.gates or self._paired)
            and not self.others
            and not self.unpaired
            and all(g.expression in self.decisions for g in self.gates)
            and all(m in self.regressions for m in self._paired)
        )

    def add(
        self, item_id: str, scored: bool, scores: Mapping[str, float | None], meta: Any
    ) -> None:
        """An item finished (``scored``: it passed); groups complete in run order are
        taken into the sequences and their gates checked."""
        if item_id not in self._group_of or self.blocked or self.decided:
            return
        self._arrived[item_id] = (scored, scores, meta)
        groups = self.order.groups
        while self.next_group < len(groups) and all(
            i in self._arrived for i in groups[self.next_group]
        ):
            self._take(groups[self.next_group])
            if self.blocked or self.decided:
                return

    def _take(self, group: list[str]) -> None:
        rows = [self._arrived.pop(i) for i in group]
        if not all(scored for scored, _, _ in rows):
            self.blocked = "an item of the suite failed"
            return
        draws = {}
        for metric in sorted({*self._metrics, *self._paired}):
            low, high = self.order.ranges[metric]
            values = [scores.get(metric) for _, scores, _ in rows]
            if any(v is None for v in values):
                self.blocked = f"an item has no {metric} score"
                return
            draws[metric] = [(float(v) - low) / (high - low) for v in values if v is not None]
        for metric, paired in self._paired.items():
            paired.take(list(zip(group, draws[metric], strict=True)))
        for metric in self._metrics:
            values = draws[metric]
            self._sums[metric] += math.fsum(values)
            draw = group_draw(np.array([math.fsum(values)]), self._scale)
            self._cs[metric].update(draw)
            if metric in self._iid:
                self._iid[metric].update(draw)
        self.n += len(group)
        self.next_group += 1
        if self.order.stratum:
            for _, _, meta in rows:
                level = str((meta or {}).get(self.order.stratum))
                self._strata[level] = self._strata.get(level, 0) + 1
        self._check()

    def bounds(self, metric: str, iid: bool = False) -> tuple[float, float]:
        """The sequence of ``metric`` now, in the metric's unit: the groups' bounds rescaled
        to the items' mean, cut to what the items not yet run could make of it; ``iid``:
        the with-replacement sequence's (the distribution's mean: no such cut)."""
        cs = (self._iid if iid else self._cs)[metric]
        low, high = item_bounds(
            cs, np.array([self._sums[metric]]), self.n, len(self.order.groups), self.population,
            self._scale,
        )  # fmt: skip
        lo, hi = self.order.ranges[metric]
        return lo + (hi - lo) * float(low[0]), lo + (hi - lo) * float(high[0])

    def _check(self) -> None:
        self._check_regressions()
        complete = self.n >= self.population
        for gate in self.gates:
            if gate.expression in self.decisions or self.n < self._floor[gate.expression]:
                continue
            metric = gate.metric.partition("/")[2]
            interval = gate.stat != "mean"
            low, high = self.bounds(metric, iid=interval)
            lo, hi = self.order.ranges[metric]
            mean = lo + (hi - lo) * self._sums[metric] / self.n
            if complete and not interval:
                low = high = mean  # every item scored: the mean itself
            passed = _verdict(gate.op, gate.threshold, low, high)
            # an interval gate still open at n = N is the fixed-n interval's to decide
            if passed is not None:
                side = self.alpha / 2 if interval else self.alpha
                sequence = GateSequence(
                    method=METHOD_IID if interval else METHOD, level=1 - 2 * side,
                    alpha_per_side=side,
                    n=self.n, population=self.population, low=low, high=high, mean=mean,
                    order_seed=self.order.seed, order_seed_given=self.order.seed_given,
                    stratum=self.order.stratum, strata=dict(sorted(self._strata.items())),
                    strata_total=len(self.order.strata),
                )  # fmt: skip
                self.decisions[gate.expression] = Decision(passed, sequence)

    def _check_regressions(self) -> None:
        """Decide each paired sequence whose bounds clear ``-D``: "no regression" when the
        lower bound of the mean difference is above it, "regression" when the upper bound
        is below it; one still open after its last shared item is the full-run rule's."""
        if self.regression is None:
            return
        for metric, paired in self._paired.items():
            if metric in self.regressions or not paired.n or paired.n >= paired.population:
                continue
            lo, hi = self.order.ranges[metric]
            low, high = ((hi - lo) * b for b in paired.bounds())
            limit = -self.regression.max_regression
            failed = True if high < limit else False if low > limit else None
            if failed is None:
                continue
            sequence = GateSequence(
                method=METHOD, level=1 - 2 * self.alpha, alpha_per_side=self.alpha,
                n=paired.n, population=paired.population, low=low, high=high,
                mean=(hi - lo) * paired.diff / paired.n,
                order_seed=self.order.seed, order_seed_given=self.order.seed_given,
            )  # fmt: skip
            self.regressions[metric] = RegressionDecision(failed, sequence)


def decided_comparison(comparison: dict[str, Any], decision: RegressionDecision) -> dict[str, Any]:
    """The record's comparison (``baseline.comparisons[]``) of a regression check its
    sequence decided: ``failed`` is the sequence's, ``ci_low``/``ci_high`` its anytime-valid
    bounds of the mean difference over every shared item, ``sequence`` how it decided, and
    the verdict says so (``delta`` stays the mean over the shared items that ran)."""
    seq = decision.sequence
    word = "regression" if decision.failed else "no regression"
    side = "upper" if decision.failed else "lower"
    verdict = (
        f"{word} beyond the tolerated drop: decided after {seq.n:,} of {seq.population:,} "
        f"shared items, mean difference in [{seq.low:+.4f}, {seq.high:+.4f}] (anytime-valid, "
        f"each side's error <= {seq.alpha_per_side:.1%}; its {side} bound "
        f"{'below' if decision.failed else 'above'} the tolerated drop)"
    )
    return {
        **comparison, "ci_low": seq.low, "ci_high": seq.high, "verdict": verdict,
        "failed": decision.failed, "sequence": seq.model_dump(),
    }  # fmt: skip


def decided_by(decision: Decision, gate: Gate) -> GateEntry:
    """The gate entry (:meth:`plugins.verdict.gates.Gate.entry`, with its ``sequence``) of
    a gate its sequence decided; the reason says after how many items and on what bounds."""
    seq = decision.sequence
    side = seq.alpha_per_side if seq.alpha_per_side is not None else (1 - seq.level) / 2
    level = f"anytime-valid, each side's error <= {side:.1%}"
    value = {"ci_low": seq.low, "ci_high": seq.high}.get(gate.stat, seq.mean)
    name = gate.metric if gate.stat == "mean" else f"{gate.metric}:{gate.stat}"
    when = (
        f"decided after {seq.n:,} of {seq.population:,} items: [{seq.low:.4f}, {seq.high:.4f}] "
        f"({level})"
        if seq.n < seq.population
        else f"decided at n = N = {seq.population:,}: the mean of every item ({level} "
        "sequence not decided earlier)"
        if gate.stat == "mean"
        else f"decided at n = N = {seq.population:,} by the i.i.d. sequence: "
        f"[{seq.low:.4f}, {seq.high:.4f}] ({level})"
    )
    if seq.stratum and seq.n < seq.population:
        when += f"; saw {len(seq.strata)} of {seq.strata_total} {seq.stratum} levels"
    if seq.order_seed_given:
        when += f"; order --order-seed {seq.order_seed}"
    reason = f"{name} = {value:.4f}, required {gate.op} {gate.threshold:g}; {when}"
    return gate.entry(value, decision.passed, reason, seq.n, sequence=seq)


ANYTIME = (
    "anytime-valid bounds of the suite's mean over every selected item (confidence sequence: "
    f"{METHOD}, each side's error <= {ALPHA:.0%}); the mean is a stopped estimate"
)
NO_INTERVAL = (
    "none: the suite stopped early (--stop-when-decided), and a fixed-n interval over the "
    "items the data let run does not hold; the mean is a stopped estimate"
)


def metric_range(order: RunOrder, metric: str) -> tuple[float, float] | None:
    """The declared range of ``metric`` of a suite run in ``order``: a gated or compared
    metric's, else the first of ``order.metric_ranges`` whose pattern matches, else [0, 1];
    None when it is not finite."""
    if metric in order.ranges:
        low, high = order.ranges[metric]
        return low, high
    for pattern, bounds in order.metric_ranges.items():
        if fnmatch.fnmatchcase(metric, pattern):
            return (bounds[0], bounds[1]) if bounds else None
    return 0.0, 1.0


def stopped_bounds(
    order: RunOrder, metric: str, scores: Mapping[str, float | None], alpha: float = ALPHA
) -> tuple[float, float] | None:
    """The anytime-valid bounds of the suite's mean of ``metric`` after the groups that
    ran, in run order: the same sequence a gate on its mean is decided by (the groups drawn
    without replacement, :func:`group_draw`, :func:`item_bounds`, two-sided ``1 - 2
    alpha``), taken up to the first group not wholly scored; None when the metric's range
    is not finite or a score lies outside it.

    Args:
        order: the suite's run order.
        scores: item id -> its score of ``metric`` (the items that were scored).
    """
    bounds = metric_range(order, metric)
    if bounds is None or not all(map(math.isfinite, bounds)) or bounds[1] <= bounds[0]:
        return None
    lo, hi = bounds
    sizes = [len(group) for group in order.groups]
    population, largest = sum(sizes), max(sizes, default=1)
    cs = HedgedCS(max(len(sizes), 1), 2 * alpha)
    total, n = 0.0, 0
    for group in order.groups:
        values = [scores.get(i) for i in group]
        if any(v is None for v in values):
            break
        scaled = [(float(v) - lo) / (hi - lo) for v in values if v is not None]
        if not all(0.0 <= v <= 1.0 for v in scaled):
            return None
        total += math.fsum(scaled)
        n += len(group)
        cs.update(group_draw(np.array([math.fsum(scaled)]), largest))
    low, high = item_bounds(cs, np.array([total]), n, len(sizes), population, largest)
    return lo + (hi - lo) * float(low[0]), lo + (hi - lo) * float(high[0])


def mark_stopped_early(
    aggregates: dict[str, dict[str, Any]], suites: Mapping[str, Any], items: Iterable[Any] = ()
) -> None:
    """Flag (``stopped_early``) each ``suite/metric`` aggregate of a suite whose early stop
    left items not run (``suites.NAME.run_order.not_run``), and give it, in place of the
    fixed-n 95% interval, the anytime-valid bounds of the suite's mean
    (:func:`stopped_bounds`; ``ci_method`` :data:`ANYTIME`), or, where the metric's range
    is not finite, no interval (``ci_method`` :data:`NO_INTERVAL`: the reports show none).
    Its breakdown rows are flagged and carry no interval either.

    Args:
        aggregates: ``suite/metric`` -> the aggregate (``plugins.verdict.aggregate``).
        suites: the record's ``suites``; items: its item entries (``id``, ``suite``,
            ``outcome``, ``scores``).
    """
    scored: dict[str, dict[str, float | None]] = {}
    for it in items:
        if it.outcome == "passed":
            for metric, value in it.scores.items():
                scored.setdefault(f"{it.suite}/{metric}", {})[it.id] = value
    for key, entry in aggregates.items():
        suite, _, metric = key.partition("/")
        order = getattr(suites.get(suite), "run_order", None)
        if order is None or not order.not_run:
            continue
        entry["stopped_early"] = True
        bounds = stopped_bounds(order, metric, scored.get(key, {}))
        if bounds is None:
            entry["ci_method"] = NO_INTERVAL
        else:
            entry["ci_low"], entry["ci_high"] = bounds
            entry["ci_method"] = ANYTIME
        for levels in (entry.get("breakdowns") or {}).values():
            for sub in levels.values():
                sub["stopped_early"], sub["ci_method"] = True, NO_INTERVAL


def replay(
    suites: Mapping[str, Any],
    items: Iterable[Any],
    gates: Sequence[Gate],
    baseline: Mapping[str, Mapping[str, float]] | None = None,
    max_regression: float | None = None,
) -> dict[str, SuiteSequence]:
    """Each suite of a run record that ran in a random order (``suites.NAME.run_order``),
    its sequence fed with the record's items as the live run's controller was.

    Args:
        suites: the record's ``suites`` (``SuiteInfo`` by name).
        items: the record's item entries (``id``, ``suite``, ``outcome``, ``scores``,
            ``meta``).
        gates: the gates the record is decided on.
        baseline, max_regression: the baseline's ``suite/metric -> id -> score``
            (:func:`plugins.verdict.baseline.item_scores`) and ``--max-regression``: each
            suite's regression check is then decided by its paired sequences.
    """
    out = {
        name: SuiteSequence(
            info.run_order,
            [g for g in gates if g.suite == name],
            regression=regression_of(baseline or {}, name, max_regression),
        )  # fmt: skip
        for name, info in suites.items()
        if info.run_order is not None
    }
    for it in items:
        if it.suite in out:
            out[it.suite].add(it.id, it.outcome == "passed", it.scores, it.meta)
    return out
