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

The live run's controller (:mod:`plugins.run.early_stop`) and :func:`plugins.verdict.decide`
feed the same :class:`SuiteSequence`, one from the arriving items, the other from the
run record, so both reach the same decision.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from extractbench.plugins.record.values import GateSequence, RunOrder
from extractbench.plugins.verdict.counts import DATA_FIGURES
from extractbench.plugins.verdict.gates import Gate
from extractbench.plugins.verdict.sequential import METHOD, METHOD_IID, HedgedCS

__all__ = [
    "SuiteSequence", "sequential_gate", "known_before_items", "group_draw", "item_bounds",
    "decided_by", "mark_stopped_early", "replay",
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
    cs: HedgedCS, totals: np.ndarray, n: int, groups: int, population: int, largest: int
) -> tuple[np.ndarray, np.ndarray]:
    """The sequence of the groups' draws (:func:`group_draw`) as bounds on the items' mean,
    in [0, 1]: the draws' mean is the items' mean times ``N / (G k)``, so their bounds are
    scaled by ``G k / N``; a without-replacement sequence's are also cut to what the items
    not yet run could make of the mean (``[S / N, (S + N - n) / N]``).

    Args:
        cs: the groups' sequence (``population`` G, or None: i.i.d.), after the groups so far.
        totals: shape ``(runs,)``: the sum of the items' scaled scores so far.
        n: the items so far; groups: G; population: N, the items; largest: k.

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


class SuiteSequence:
    """The gates of one suite, decided as its groups complete in run order.

    Args:
        order: the suite's run order.
        gates: the suite's gates (those that are not :func:`sequential_gate` are kept out;
            a minimum n among them sets how many items a decision needs).
        alpha: the error level of each side of each gate (the sequence is the two-sided
            ``1 - 2 alpha`` one).
    """

    def __init__(self, order: RunOrder, gates: Iterable[Gate], alpha: float = ALPHA) -> None:
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
            bool(self.gates)
            and not self.others
            and all(g.expression in self.decisions for g in self.gates)
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
        for metric in self._metrics:
            low, high = self.order.ranges[metric]
            values = [scores.get(metric) for _, scores, _ in rows]
            if any(v is None for v in values):
                self.blocked = f"an item has no {metric} score"
                return
            draws[metric] = [(float(v) - low) / (high - low) for v in values if v is not None]
        for metric, values in draws.items():
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


def decided_by(decision: Decision, gate: Gate) -> dict[str, Any]:
    """The record's gate entry (``GateResult.to_dict`` plus ``sequence``) of a gate its
    sequence decided; the reason says after how many items and on what bounds."""
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
    return {
        "expression": gate.expression, "metric": gate.metric, "stat": gate.stat,
        "op": gate.op, "threshold": gate.threshold, "source": gate.source,
        "value": value, "passed": decision.passed,
        "reason": f"{name} = {value:.4f}, required {gate.op} {gate.threshold:g}; {when}",
        "n": seq.n, "min_n": None, "warning": None, "sequence": seq.model_dump(),
    }  # fmt: skip


def mark_stopped_early(aggregates: dict[str, dict[str, Any]], suites: Mapping[str, Any]) -> None:
    """Flag (``stopped_early``) each ``suite/metric`` aggregate of a suite whose early stop
    left items not run (``suites.NAME.run_order.not_run``)."""
    for key, entry in aggregates.items():
        info = suites.get(key.partition("/")[0])
        order = getattr(info, "run_order", None)
        if order is not None and order.not_run:
            entry["stopped_early"] = True


def replay(
    suites: Mapping[str, Any], items: Iterable[Any], gates: Sequence[Gate]
) -> dict[str, SuiteSequence]:
    """Each suite of a run record that ran in a random order (``suites.NAME.run_order``),
    its sequence fed with the record's items as the live run's controller was.

    Args:
        suites: the record's ``suites`` (``SuiteInfo`` by name).
        items: the record's item entries (``id``, ``suite``, ``outcome``, ``scores``,
            ``meta``).
        gates: the gates the record is decided on.
    """
    out = {
        name: SuiteSequence(info.run_order, [g for g in gates if g.suite == name])
        for name, info in suites.items()
        if info.run_order is not None
    }
    for it in items:
        if it.suite in out:
            out[it.suite].add(it.id, it.outcome == "passed", it.scores, it.meta)
    return out
