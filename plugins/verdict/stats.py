"""Confidence intervals for a mean score."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Estimate", "estimate", "wilson_interval", "bootstrap_interval", "is_binary"]

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
        method: ``"wilson"``, ``"bootstrap"`` or ``"none"`` (n < 2 for bootstrap).
    """

    mean: float
    ci_low: float
    ci_high: float
    n: int
    method: str


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
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
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


def estimate(values: Sequence[float]) -> Estimate:
    """Mean and 95% CI: Wilson for binary values, percentile bootstrap otherwise.

    Args:
        values: the per-item scores in a canonical order (sorted by item id).

    Raises:
        ValueError: ``values`` is empty.
    """
    n = len(values)
    if n == 0:
        raise ValueError("estimate needs at least one value")
    mean = math.fsum(values) / n
    if is_binary(values):
        low, high = wilson_interval(int(round(math.fsum(values))), n)
        return Estimate(mean, low, high, n, "wilson")
    if n < 2:
        return Estimate(mean, mean, mean, n, "none")
    low, high = bootstrap_interval(values)
    return Estimate(mean, low, high, n, "bootstrap")
