"""The anytime-valid confidence sequence (plugins/verdict/sequential.py): the authors'
package's values, what it guarantees, and what looking at a fixed-n interval after every
item would cost."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from extractbench.plugins.verdict.sequential import HedgedCS
from extractbench.plugins.verdict.stats import Z_95

REFERENCE = json.loads((Path(__file__).parent / "data" / "confseq_hedged_cs.json").read_text())


@pytest.mark.parametrize("name", sorted(REFERENCE["cases"]))
def test_bounds_are_confseq_hedged_cs_values(name):
    """confseq 0.0.11's ``hedged_cs(x, alpha=0.05, N=N)`` (tests/data/confseq_hedged_cs.py
    wrote them), draw by draw, on binary, continuous, four-level and rare-event
    populations, some drawn in part."""
    case = REFERENCE["cases"][name]
    cs = HedgedCS(case["N"], REFERENCE["alpha"])
    lows, highs = [], []
    for x in case["x"]:
        cs.update(x)
        lows.append(float(cs.low[0]))
        highs.append(float(cs.high[0]))
    assert lows == pytest.approx(case["low"], abs=1e-12)
    assert highs == pytest.approx(case["high"], abs=1e-12)


def test_runs_side_by_side_are_each_the_single_run():
    rng = np.random.default_rng(3)
    draws = rng.random((3, 25))
    together = HedgedCS(40, runs=3)
    alone = [HedgedCS(40) for _ in range(3)]
    for t in range(25):
        together.update(draws[:, t])
        for r, cs in enumerate(alone):
            cs.update(draws[r, t])
    assert together.low.tolist() == [float(cs.low[0]) for cs in alone]
    assert together.high.tolist() == [float(cs.high[0]) for cs in alone]


def test_the_bounds_only_narrow_and_end_at_the_population_mean():
    population = np.random.default_rng(5).permutation(np.r_[np.full(30, 0.2), np.full(10, 0.9)])
    cs = HedgedCS(population.size)
    widths = []
    for x in population:
        before = (float(cs.low[0]), float(cs.high[0]))
        cs.update(x)
        assert before[0] <= cs.low[0] <= cs.high[0] <= before[1]
        widths.append(float(cs.high[0] - cs.low[0]))
    mean = population.mean()
    assert cs.low[0] == pytest.approx(mean) and cs.high[0] == pytest.approx(mean)
    assert widths[0] > 0.5 > widths[len(widths) // 2]


def test_values_outside_the_unit_interval_and_extra_draws_are_refused():
    cs = HedgedCS(2)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        cs.update(1.5)
    cs.update(0.0)
    cs.update(1.0)
    with pytest.raises(ValueError, match="all 2 values"):
        cs.update(0.5)
    with pytest.raises(ValueError, match="population >= 1"):
        HedgedCS(0)


def test_deciding_at_the_first_look_that_clears_the_threshold_errs_at_most_alpha():
    """2,000 runs, each a random order of a population whose mean is exactly the threshold
    (50 ones, 50 zeros): a gate ``mean > 0.5`` passes when the sequence's lower bound
    clears 0.5 after any item, ``mean < 0.5`` when its upper bound does, and each share
    stays at or under 5%. The fixed-n 95% (Wilson) interval looked at after every item
    and acted on the first time it clears 0.5 passes such a gate far more often.

    The grid of candidate means here is that of the population's possible means (1/N
    apart) instead of 1/1000: a coarser grid only widens the bounds (the sequence stays
    valid at any grid), and the simulation takes seconds instead of minutes."""
    runs, size, alpha = 2000, 100, 0.05
    rng = np.random.default_rng(58)
    population = np.r_[np.ones(size // 2), np.zeros(size // 2)]
    draws = rng.permuted(np.tile(population, (runs, 1)), axis=1)
    cs = HedgedCS(size, alpha, runs=runs, breaks=size)
    above = np.zeros(runs, dtype=bool)
    below = np.zeros(runs, dtype=bool)
    for t in range(size):
        cs.update(draws[:, t])
        above |= cs.low > 0.5
        below |= cs.high < 0.5
    assert above.mean() <= alpha and below.mean() <= alpha
    # the fixed-n interval, looked at after every item
    n = np.arange(1, size + 1)
    p = np.cumsum(draws, axis=1) / n
    z2 = Z_95**2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z_95 * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    naive_above = ((centre - half) > 0.5).any(axis=1).mean()
    naive_below = ((centre + half) < 0.5).any(axis=1).mean()
    assert naive_above > 2 * alpha and naive_below > 2 * alpha
    assert naive_above > 4 * above.mean() and naive_below > 4 * below.mean()
