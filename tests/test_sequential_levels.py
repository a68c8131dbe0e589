"""The early stop's error levels, per side, measured: grouped populations whose items are
correlated within a group (FDA's chunks), drawn in random group orders, decided through
the suite-level code (plugins/verdict/sequential_gates.py: ``group_draw`` and
``item_bounds`` over :class:`HedgedCS`) at the production grid (1,000 breaks) and level
(5% per side).

A gate at a threshold equal to the suite's mean is wrong whenever it is decided before
the last group: ``mean > m`` passes wrongly when the lower bound clears ``m``, ``mean < m``
when the upper bound falls below it. Each side must stay at or under 5%. The slow tests
show the power: computing the sequence over the items while the groups are drawn
(``items``) errs on the same populations far more often than 5%."""

from __future__ import annotations

import numpy as np
import pytest

from extractbench.plugins.verdict.sequential import HedgedCS
from extractbench.plugins.verdict.sequential_gates import ALPHA, group_draw, item_bounds

RUNS = 1000  # orders per population: a 5% rate is measured to about +-0.7%


def population(seed: int, groups: int, largest: int) -> tuple[list[np.ndarray], float]:
    """Groups of 1 to ``largest`` items, each group's items correct with its own
    probability (Beta(0.3, 0.4): most groups nearly all right or all wrong)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, largest + 1, size=groups)
    rates = rng.beta(0.3, 0.4, size=groups)
    values = [(rng.random(k) < p).astype(float) for k, p in zip(sizes, rates, strict=True)]
    mean = float(np.concatenate(values).mean())
    return values, mean


def orders(values: list[np.ndarray], seed: int) -> np.ndarray:
    """``RUNS`` random orders of the groups: shape ``(RUNS, G)``, group indices."""
    rng = np.random.default_rng(seed)
    return rng.permuted(np.tile(np.arange(len(values)), (RUNS, 1)), axis=1)


def error_rates(values: list[np.ndarray], mean: float, order: np.ndarray, variant: str):
    """The share of orders whose bounds cross the suite's mean before the last item: the
    lower bound above it (a wrong PASS of ``> mean``), the upper below (a wrong FAIL).

    ``variant``: ``groups`` (the production method), ``items`` (one draw per item, in the
    groups' order: the method the groups' correlation breaks)."""
    sizes = np.array([len(v) for v in values])
    sums = np.array([v.sum() for v in values])
    big_n, groups, largest = int(sizes.sum()), len(values), int(sizes.max())
    above = np.zeros(RUNS, dtype=bool)
    below = np.zeros(RUNS, dtype=bool)
    if variant == "groups":
        cs = HedgedCS(groups, 2 * ALPHA, runs=RUNS)
        totals, n = np.zeros(RUNS), np.zeros(RUNS, dtype=int)
        for t in range(groups - 1):  # the last group decides exactly: no error there
            picked = order[:, t]
            cs.update(group_draw(sums[picked], largest))
            totals += sums[picked]
            n += sizes[picked]
            low, high = item_bounds(cs, totals, n, groups, big_n, largest)
            above |= low > mean + 1e-9  # a bound pinned at the mean is no error
            below |= high < mean - 1e-9
    else:
        items = np.stack([np.concatenate([values[g] for g in row]) for row in order])
        cs = HedgedCS(big_n, 2 * ALPHA, runs=RUNS)
        for t in range(big_n - 1):
            cs.update(items[:, t])
            above |= cs.low > mean + 1e-9
            below |= cs.high < mean - 1e-9
    return above.mean(), below.mean()


@pytest.mark.parametrize("seed", [1, 2])
def test_each_side_errs_at_most_alpha_on_correlated_groups(seed):
    values, mean = population(seed, groups=80, largest=12)
    above, below = error_rates(values, mean, orders(values, seed), "groups")
    assert above <= ALPHA and below <= ALPHA, (above, below)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_the_items_instead_of_groups_variant_errs_far_more(seed):
    """The same populations and orders, one draw per item: the error the test above
    bounds, far over 5% on at least one side."""
    values, mean = population(seed, groups=80, largest=12)
    above, below = error_rates(values, mean, orders(values, seed), "items")
    assert max(above, below) > 2 * ALPHA, (above, below)


def iid_error_rates(values: list[np.ndarray], seed: int, groups: int) -> tuple[float, float]:
    """Suites of ``groups`` groups drawn with replacement from ``values`` (the distribution
    an interval gate asks about, whose mean per item is ``E[sum] / E[size]``), each decided
    by the i.i.d. sequence of its group draws at every n, at the production level (half the
    gate's: the fixed-n interval at n = N spends the other half): the share whose lower
    bound clears the distribution's mean (a wrong PASS of ``:ci_low > mean``), and whose
    upper bound falls below it (a wrong FAIL)."""
    rng = np.random.default_rng(seed)
    sizes = np.array([len(v) for v in values])
    sums = np.array([v.sum() for v in values])
    mean = sums.mean() / sizes.mean()
    picked = rng.integers(0, len(values), size=(RUNS, groups))
    largest, big_n = int(sizes.max()), sizes[picked].sum(axis=1)
    cs = HedgedCS(None, ALPHA, runs=RUNS)
    above = np.zeros(RUNS, dtype=bool)
    below = np.zeros(RUNS, dtype=bool)
    totals, n = np.zeros(RUNS), np.zeros(RUNS, dtype=int)
    for t in range(groups):
        cs.update(group_draw(sums[picked[:, t]], largest))
        totals += sums[picked[:, t]]
        n += sizes[picked[:, t]]
        low, high = item_bounds(cs, totals, n, groups, big_n, largest)
        above |= low > mean
        below |= high < mean
    return above.mean(), below.mean()


@pytest.mark.parametrize("seed", [1, 2])
def test_an_interval_gates_sequence_errs_at_most_half_alpha_per_side(seed):
    values, _ = population(seed, groups=80, largest=12)
    above, below = iid_error_rates(values, seed, groups=80)
    assert above <= ALPHA / 2 and below <= ALPHA / 2, (above, below)
