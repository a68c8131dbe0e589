"""Confidence intervals for a mean score, with or without groups of correlated items.

Items that share a prompt prefix (a group: FDA's document chunk, ``kv``'s document chunk,
Table QA's table) are answered from one text, so their scores are correlated and a
suite's items carry less information than as many independent items. Given the items'
groups, :func:`estimate` makes the interval account for them: a binary metric's Wilson
interval on the design-effect (effective) sample size, a continuous metric's bootstrap
resampling whole groups. Items each in their own group get the independent-items
interval, unchanged."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = [
    "Estimate", "estimate", "wilson_interval", "wilson_bounds", "bootstrap_interval",
    "cluster_bootstrap_interval", "effective_n", "t_quantile", "is_binary",
]  # fmt: skip

Z_95 = 1.959963984540054  # two-sided 95% standard-normal quantile
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 1234


@dataclass(frozen=True)
class Estimate:
    """A mean with its 95% confidence interval.

    Attributes:
        mean: arithmetic mean of the values.
        ci_low, ci_high: bounds of the 95% interval (same unit as the values).
        n: number of values.
        method: ``"wilson"``, ``"bootstrap"`` or ``"none"`` (n < 2 for bootstrap) for
            independent items; ``"wilson_deff"`` (Wilson on the design-effect sample
            size, :func:`effective_n`) or ``"cluster_bootstrap"``
            (:func:`cluster_bootstrap_interval`) when items share groups.
        groups: the number of groups the interval accounted for; None when every item
            is its own group (the interval treats the items as independent).
    """

    mean: float
    ci_low: float
    ci_high: float
    n: int
    method: str
    groups: int | None = None


def is_binary(values: Sequence[float]) -> bool:
    """True when every value is exactly 0 or 1."""
    return all(v in (0.0, 1.0) for v in values)


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Source: E. B. Wilson (1927), "Probable inference, the law of succession, and
    statistical inference", JASA 22:209-212; centre (p + z²/2n) / (1 + z²/n), half-width
    z·sqrt(p(1-p)/n + z²/4n²) / (1 + z²/n).

    Args:
        successes: number of 1s, 0 <= successes <= n.
        n: number of trials, > 0.

    Returns:
        (low, high) in [0, 1].

    Raises:
        ValueError: n <= 0 or successes outside [0, n].
    """
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(
            f"wilson_interval needs 0 <= successes <= n and n > 0, got {successes}/{n}"
        )
    return wilson_bounds(successes / n, n, z)


def wilson_bounds(p: float, n: float, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``p`` observed on ``n`` trials, ``n`` a
    real number: an effective sample size (:func:`effective_n`) as well as a count.

    Same formula and source as :func:`wilson_interval`; Wilson on an effective sample
    size is the interval Dean & Pagano (2015), "Evaluating confidence interval methods
    for binomial proportions in clustered surveys", J. Survey Statistics and Methodology
    3(4):484-503, found to keep its level under clustering.

    Args:
        p: the proportion, in [0, 1].
        n: trials, > 0.

    Returns:
        (low, high) in [0, 1]; low is 0 when p is 0, high is 1 when p is 1.
    """
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if p == 0 else max(0.0, centre - half)
    high = 1.0 if p == 1 else min(1.0, centre + half)
    return low, high


def bootstrap_interval(
    values: Sequence[float],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the mean (Efron & Tibshirani 1993, ch. 13).

    Deterministic for a given value order and seed: callers sort values by item id so
    the interval is identical whatever order xdist delivered the results in.

    Args:
        values: n >= 1 floats.

    Returns:
        (low, high): the 2.5th and 97.5th percentiles of ``resamples`` resampled means.
    """
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        raise ValueError("bootstrap_interval needs at least one value")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, arr.size, size=(resamples, arr.size))
    means = arr[idx].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def _group_index(groups: Sequence[str]) -> tuple[np.ndarray, int]:
    """Each value's group as an index 0..G-1 (in order of first appearance) and G."""
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(g, len(index)) for g in groups), dtype=np.intp)
    return codes, len(index)


def _t_coverage(theta: float, df: int) -> float:
    """``P(|T| <= sqrt(df) tan(theta))`` for Student's t with ``df`` (>= 1, whole)
    degrees of freedom: the finite series in ``cos(theta)`` of Abramowitz & Stegun (1964),
    Handbook of Mathematical Functions, 26.7.3, one form for odd ``df``, one for even.

    Args:
        theta: in [0, pi/2): ``atan(t / sqrt(df))``.
        df: the degrees of freedom.

    Returns:
        The two-sided probability, in [0, 1).
    """
    c2 = math.cos(theta) ** 2
    if df % 2:  # 2/pi (theta + sin cos (1 + 2/3 c^2 + 2.4/3.5 c^4 + ... c^(df-3)))
        k = np.arange(1, (df - 1) // 2)
        terms = np.cumprod(2 * k / (2 * k + 1) * c2)
        inner = math.sin(theta) * math.cos(theta) * (1 + float(terms.sum())) if df > 1 else 0.0
        return 2 / math.pi * (theta + inner)
    k = np.arange(1, df // 2)  # sin (1 + 1/2 c^2 + 1.3/2.4 c^4 + ... c^(df-2))
    terms = np.cumprod((2 * k - 1) / (2 * k) * c2)
    return math.sin(theta) * (1 + float(terms.sum()))


@lru_cache(maxsize=256)
def t_quantile(df: int) -> float:
    """The 97.5th percentile of Student's t with ``df`` (>= 1, whole) degrees of freedom:
    :func:`_t_coverage` (0.95 two-sided) solved by bisection on ``theta``, to about
    1e-12 relative (checked against scipy's ``t.ppf`` in the tests; computed here so
    that the verdict does not import scipy).

    Raises:
        ValueError: ``df`` < 1.
    """
    if df < 1:
        raise ValueError(f"t_quantile needs df >= 1, got {df}")
    low, high = 0.0, math.pi / 2
    for _ in range(60):
        mid = (low + high) / 2
        if _t_coverage(mid, df) < 0.95:
            low = mid
        else:
            high = mid
    return math.sqrt(df) * math.tan((low + high) / 2)


def effective_n(values: Sequence[float], groups: Sequence[str]) -> float:
    """The design-effect sample size of a proportion estimated from items in groups
    (Korn & Graubard 1998, "Confidence intervals for proportions with small expected
    number of positive counts estimated from survey data", Survey Methodology
    24(2):193-201, their ``n*`` with the degrees-of-freedom adjustment).

    The proportion ``p = sum(y) / n`` is a ratio mean over the ``G`` groups; its
    with-replacement cluster (linearization) variance is
    ``v = G / (G - 1) * sum_g (y_g - p m_g)^2 / n^2`` (``y_g`` the group's sum, ``m_g`` its
    size; Kish 1965, Survey Sampling, ch. 6, the variance of a ratio mean), and
    ``n* = min(n, p (1 - p) / v)``, which is ``n / deff`` with Kish's design effect
    ``deff = 1 + (m - 1) ICC`` estimated from the data (ch. 5), never above ``n``. With
    few groups the variance has about ``G - 1`` degrees of freedom, so ``n*`` is scaled by
    ``(t_{n-1} / t_{G-1})^2`` (the 97.5th percentiles of Student's t): 1 when every item
    is its own group, about 0.6 for 15 items in 5 groups.

    Args:
        values: the items' 0/1 scores, shape ``(n,)``.
        groups: each item's group id, shape ``(n,)``, at least two distinct ids.

    Returns:
        The effective sample size, in (0, n]. When ``p`` is 0 or 1 the variance is 0 and
        ``n`` is used (Korn & Graubard's rule), still scaled by ``(t_{n-1} / t_{G-1})^2``.

    Raises:
        ValueError: lengths differ, or fewer than two groups.
    """
    y = np.asarray(values, dtype=float)
    if len(groups) != y.size:
        raise ValueError(f"effective_n: {y.size} values but {len(groups)} group ids")
    codes, count = _group_index(groups)
    if count < 2:
        raise ValueError("effective_n needs at least two groups")
    n = y.size
    p = math.fsum(values) / n
    sums = np.bincount(codes, weights=y, minlength=count)
    sizes = np.bincount(codes, minlength=count).astype(float)
    var = count / (count - 1) * float(np.sum((sums - p * sizes) ** 2)) / (n * n)
    n_star = float(n) if var <= 0 else min(float(n), p * (1 - p) / var)
    return n_star * (t_quantile(n - 1) / t_quantile(count - 1)) ** 2


def cluster_bootstrap_interval(
    values: Sequence[float],
    groups: Sequence[str],
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """Cluster bootstrap 95% interval of the items' mean: each resample draws ``G`` groups
    with replacement and takes the mean of their items (the sum of their scores over the
    sum of their sizes); Davison & Hinkley (1997), Bootstrap Methods and their
    Application, section 3.8 (hierarchical data: resample the top-level units whole).

    The percentiles are those of the expanded percentile interval (Hesterberg 2015, "What
    teachers should know about the bootstrap", The American Statistician 69(4):371-386):
    ``alpha' / 2 = 1 - Phi(sqrt(G / (G - 1)) * t_{G-1})`` with ``t_{G-1}`` the 97.5th
    percentile of Student's t. A plain percentile interval of few resampled units is too
    narrow (its spread lacks the ``G / (G - 1)`` factor, its tails the t's); on 10 groups
    it covers about 91%, the expanded one about 95% (``tests/test_cluster_intervals.py``).

    Deterministic for a given value order and seed, like :func:`bootstrap_interval`.

    Args:
        values: n >= 1 floats.
        groups: each value's group id, same length, at least two distinct ids.

    Returns:
        (low, high): the ``alpha' / 2`` and ``1 - alpha' / 2`` percentiles of ``resamples``
        resampled means.

    Raises:
        ValueError: no values, or lengths differ.
    """
    arr = np.asarray(values, dtype=float)
    codes, count = _group_index(groups)
    if arr.size == 0 or len(groups) != arr.size or count < 2:
        raise ValueError(
            f"cluster_bootstrap_interval needs n >= 1 values, as many group ids and at "
            f"least two groups, got {arr.size} values, {len(groups)} ids, {count} groups"
        )
    sums = np.bincount(codes, weights=arr, minlength=count)
    sizes = np.bincount(codes, minlength=count).astype(float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, count, size=(resamples, count))
    means = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    z = math.sqrt(count / (count - 1)) * t_quantile(count - 1)
    tail = 50 * math.erfc(z / math.sqrt(2))  # 100 * (1 - Phi(z)), in percent
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def estimate(values: Sequence[float], groups: Sequence[str] | None = None) -> Estimate:
    """Mean and 95% CI: Wilson for binary values, percentile bootstrap otherwise; when
    items share groups, the same two made to account for the groups.

    Items of one group (one prompt prefix) are correlated, and an interval that takes
    them as independent is too narrow. With ``groups`` holding fewer distinct ids than
    values, a binary metric gets the Wilson interval on the effective sample size
    (:func:`effective_n`: Kish's design effect with a t correction for few groups) and a
    continuous one the cluster bootstrap (:func:`cluster_bootstrap_interval`). Wilson
    keeps its behaviour near 0 and 1 and at small n on the smaller effective n, where a
    bootstrap of few groups, all right or all wrong, collapses to a point; a continuous
    metric has no such boundary and keeps the bootstrap, over groups. A single group
    gives no estimate of the spread between groups: a binary metric's interval is then
    [0, 1], a continuous one's the mean itself (``"none"``, as for one item).

    Args:
        values: the per-item scores in a canonical order (sorted by item id).
        groups: each item's group id in the same order, or None: every item its own
            group. Items each in their own group get exactly the interval without
            ``groups``.

    Returns:
        An :class:`Estimate`; ``groups`` set when the interval accounted for them.

    Raises:
        ValueError: ``values`` is empty, or ``groups`` has another length.
    """
    n = len(values)
    if n == 0:
        raise ValueError("estimate needs at least one value")
    if groups is not None and len(groups) != n:
        raise ValueError(f"estimate: {n} values but {len(groups)} group ids")
    count = len(set(groups)) if groups is not None else n
    mean = math.fsum(values) / n
    if count < n:
        return _grouped(values, groups or [], mean, count)
    if is_binary(values):
        low, high = wilson_interval(int(round(math.fsum(values))), n)
        return Estimate(mean, low, high, n, "wilson")
    if n < 2:
        return Estimate(mean, mean, mean, n, "none")
    low, high = bootstrap_interval(values)
    return Estimate(mean, low, high, n, "bootstrap")


def _grouped(values: Sequence[float], groups: Sequence[str], mean: float, count: int) -> Estimate:
    """:func:`estimate` of items of ``count`` groups, fewer than the items."""
    n = len(values)
    if is_binary(values):
        if count < 2:
            return Estimate(mean, 0.0, 1.0, n, "wilson_deff", count)
        low, high = wilson_bounds(mean, effective_n(values, groups))
        return Estimate(mean, low, high, n, "wilson_deff", count)
    if count < 2:
        return Estimate(mean, mean, mean, n, "none", count)
    low, high = cluster_bootstrap_interval(values, groups)
    return Estimate(mean, low, high, n, "cluster_bootstrap", count)
