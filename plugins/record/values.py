"""The values the verdict computes that the run record holds as they are: a metric's comparison
with the baseline (:mod:`plugins.verdict.baseline`), a suite's speed and a speed figure's change
(:mod:`plugins.verdict.speed`), a suite's run order and how a gate's confidence sequence decided
it (:mod:`plugins.verdict.sequential_gates`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Comparison", "SpeedStats", "SpeedChange", "RunOrder", "GateSequence"]


class Comparison(BaseModel):
    """One ``suite/metric`` against the baseline (``plugins.verdict.baseline``): means,
    ``delta`` (mean per-item difference over the ``n_shared`` items) with its paired-bootstrap
    95% interval, ``verdict``, and ``failed`` (``delta < -max_regression``, ``ci_high < 0``).
    A part of the run record (``baseline.comparisons``).

    A check that ``--stop-when-decided`` decided by its paired sequence carries it in
    ``sequence`` (``n`` of ``population`` shared items, the anytime-valid bounds of the mean
    difference); ``ci_low``/``ci_high`` are then those bounds and ``failed`` its decision."""

    model_config = ConfigDict(extra="forbid", strict=True)

    metric: str
    current: float | None
    baseline: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    n_shared: int
    only_current: int
    only_baseline: int
    verdict: str
    failed: bool
    sequence: GateSequence | None = None


class SpeedStats(BaseModel):
    """One suite's speed (the run record's ``speed.SUITE``). Over the calls the model
    answered in this run (not from the cache):

    Attributes:
        items_per_s: items with such a call / the seconds of those calls (one process's
            rate; with ``-n N`` workers the wall-clock rate is up to N times it).
        prompt_tokens, generated_tokens: tokens read and generated.
        prefill_tokens_per_s: prompt tokens read (those the backend reused from its KV
            cache left out) / prefill seconds, over calls whose backend measured the
            prefill (None: none did).
        decode_tokens_per_s: generated tokens / (latency - prefill) seconds, same calls.
        latency_p50_s, latency_p95_s, latency_max_s: per call, numpy's linear percentile.
        calls, cached_calls: every call logged, and those the cache or a record answered.
        cached_share: cached_calls / calls.
        reused_prompt_tokens: prompt tokens the backend took from its KV cache (a prefix
            the call shares with the one before on its sequence), over calls whose backend
            reports it (None: none did).
        prefix_reuse_share: the prefix-cache hit rate, ``reused_prompt_tokens`` / those
            calls' prompt tokens (None: none reported, or no prompt tokens).
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    items_per_s: float | None = None
    prompt_tokens: int = 0
    generated_tokens: int = 0
    prefill_tokens_per_s: float | None = None
    decode_tokens_per_s: float | None = None
    latency_p50_s: float | None = None
    latency_p95_s: float | None = None
    latency_max_s: float | None = None
    calls: int = 0
    cached_calls: int = 0
    cached_share: float | None = None
    reused_prompt_tokens: int | None = None
    prefix_reuse_share: float | None = None


class SpeedChange(BaseModel):
    """One speed figure against the baseline (the record's ``baseline.speed``):
    ``slowdown`` is current/baseline - 1 for a latency, baseline/current - 1 for a rate
    (0.25: 25% slower); ``failed`` when it exceeds ``--max-slowdown``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    metric: str
    current: float | None
    baseline: float | None
    slowdown: float | None
    failed: bool


class RunOrder(BaseModel):
    """The order a suite's items ran in (the record's ``suites.NAME.run_order``).

    Attributes:
        seed: the order seed the groups were ranked by: ``--order-seed``, else derived from
            the model's digest and the suite's item ids
            (:func:`plugins.run.run_order.order_seed`); never the generation ``--seed``.
        seed_given: the seed is ``--order-seed``'s (an order other than the model's own).
        groups: the item ids of each group, groups in run order.
        stratum: the breakdown attribute whose levels a decision reports (the suite's
            first), or None.
        strata: that attribute's levels among the suite's items.
        ranges: ``metric -> [low, high]``: each gated metric's declared range.
        metric_ranges: ``pattern -> [low, high]``: the suite's declared ranges by metric
            name pattern (``fnmatch``, first match wins; a metric none matches is in
            [0, 1]; None: not finite), so the reports of a stopped suite give every
            metric with a finite range its anytime-valid bounds.
        not_run: the items the early stop left out, in run order (empty when the suite's
            gates were not all decided before its last item).
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    seed: int
    seed_given: bool = False
    groups: list[list[str]]
    stratum: str | None = None
    strata: list[str] = Field(default_factory=list)
    ranges: dict[str, list[float]] = Field(default_factory=dict)
    metric_ranges: dict[str, list[float] | None] = Field(default_factory=dict)
    not_run: list[str] = Field(default_factory=list)


class GateSequence(BaseModel):
    """How a gate was decided by its sequence (the record's ``gates[].sequence``): the
    ``n`` scored items of ``population`` behind it, the bounds at that point, their mean,
    the level and the method.

    Attributes:
        level: the two-sided sequence's coverage, ``1 - 2 alpha_per_side``.
        alpha_per_side: the bound on a wrong PASS, and on a wrong FAIL, of the gate.
        order_seed, order_seed_given: the run order's seed, and whether ``--order-seed``
            gave it.
        stratum: the suite's first breakdown attribute (None: none).
        strata: its levels the decision's items covered, with their item counts.
        strata_total: how many levels the suite's items have.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    method: str
    level: float
    n: int
    population: int
    low: float
    high: float
    mean: float
    alpha_per_side: float | None = None
    order_seed: int | None = None
    order_seed_given: bool = False
    stratum: str | None = None
    strata: dict[str, int] = Field(default_factory=dict)
    strata_total: int = 0


Comparison.model_rebuild()  # its sequence is a GateSequence, defined below it
