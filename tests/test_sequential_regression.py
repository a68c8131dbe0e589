"""The paired regression check against a baseline under ``--stop-when-decided``: its
sequence over the shared items (without replacement, per-item differences in [-1, 1]
mapped to [0, 1], one update per group), its error per side on correlated groups at the
production grid, what the without-replacement correction buys (the variant without it is
conservative, so an error-rate test cannot fail it: these tests measure its width), the
suite-level decision, and a run that stops early with a baseline (pytester, fake backend).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from extractbench.plugins.record import RunOrder
from extractbench.plugins.verdict.sequential_gates import (
    ALPHA,
    Regression,
    SuiteSequence,
    difference_bounds,
    group_draw,
    paired_sequence,
    paired_value,
)
from tests.test_early_stop import ITEMS, MODES, run, toy100  # noqa: F401 (the fixture)

RUNS = 1000  # orders per population: a 5% rate is measured to about +-0.7%


def paired_population(seed: int, groups: int, largest: int):
    """Groups of 1 to ``largest`` items scored 0/1 by a baseline and by the current model,
    correlated within a group (each group's own rates, Beta(0.3, 0.4)), the current model
    keeping a group's baseline answers with a group's own probability: the items' paired
    values (:func:`paired_value`) per group and the mean difference over all items."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, largest + 1, size=groups)
    rates = rng.beta(0.3, 0.4, size=groups)
    keep = rng.beta(1, 1, size=groups)
    values, diffs = [], []
    for k, p, q in zip(sizes, rates, keep, strict=True):
        base = (rng.random(k) < p).astype(float)
        fresh = (rng.random(k) < p * 0.5).astype(float)
        cur = np.where(rng.random(k) < q, base, fresh)
        values.append(paired_value(cur, base))
        diffs.append(cur - base)
    return values, float(np.concatenate(diffs).mean())


def paired_rates(values, mean: float, seed: int, make=paired_sequence):
    """The share of ``RUNS`` random group orders whose bounds of the mean difference cross
    ``mean`` before the last group: the lower bound above it (a wrong "no regression" at a
    true drop exactly ``D = -mean``) and the upper bound below it (a wrong "regression")."""
    rng = np.random.default_rng(seed)
    order = rng.permuted(np.tile(np.arange(len(values)), (RUNS, 1)), axis=1)
    sizes = np.array([len(v) for v in values])
    sums = np.array([v.sum() for v in values])
    big_n, groups, largest = int(sizes.sum()), len(values), int(sizes.max())
    cs = make(groups, ALPHA, RUNS)
    totals, n = np.zeros(RUNS), np.zeros(RUNS, dtype=int)
    above = np.zeros(RUNS, dtype=bool)
    below = np.zeros(RUNS, dtype=bool)
    for t in range(groups - 1):
        picked = order[:, t]
        cs.update(group_draw(sums[picked], largest))
        totals += sums[picked]
        n += sizes[picked]
        low, high = difference_bounds(cs, totals, n, groups, big_n, largest)
        above |= low > mean + 1e-9
        below |= high < mean - 1e-9
    return above.mean(), below.mean()


@pytest.mark.parametrize("seed", [1, 2])
def test_a_true_drop_exactly_at_the_tolerance_is_passed_wrongly_at_most_alpha(seed):
    values, mean = paired_population(seed, groups=80, largest=12)
    assert -0.2 < mean < 0  # a drop, as the check is built for
    above, below = paired_rates(values, mean, seed)
    assert above <= ALPHA and below <= ALPHA, (above, below)


def _drawn_whole(values, make, limit=-0.05):
    """Every group drawn once in its own order: the bounds of the mean difference after
    the last group, and the first draw after which the lower bound clears ``limit``."""
    sizes = np.array([len(v) for v in values])
    sums = np.array([v.sum() for v in values])
    big_n, groups, largest = int(sizes.sum()), len(values), int(sizes.max())
    cs = make(groups, ALPHA, 1)
    total, n, first = 0.0, 0, None
    for t in range(groups):
        cs.update(group_draw(np.array([sums[t]]), largest))
        total += sums[t]
        n += int(sizes[t])
        low, high = difference_bounds(cs, np.array([total]), n, groups, big_n, largest)
        if first is None and low[0] > limit:
            first = t + 1
    return float(low[0]), float(high[0]), first


def test_the_whole_population_drawn_pins_the_mean_difference():
    """After the last shared item the sequence's bounds are the mean difference itself, so
    a check at any margin is decided by then (with replacement they stay an interval)."""
    values, mean = paired_population(3, groups=60, largest=5)
    low, high, _ = _drawn_whole(values, paired_sequence)
    assert low == pytest.approx(mean, abs=1e-9) and high == pytest.approx(mean, abs=1e-9)


def test_the_correction_decides_a_near_threshold_check_in_fewer_draws():
    """A model equal to its baseline on 300 single items (a fifth of them changed either
    way, mean difference 0) at ``D = 0.03``: the without-replacement sequence decides "no
    regression" after 124 of them; the same draws taken as i.i.d. never decide."""
    rng = np.random.default_rng(4)
    d = np.zeros(300)
    d[rng.choice(300, 60, replace=False)] = np.repeat([1.0, -1.0], 30)
    values = [np.array([(v + 1) / 2]) for v in d]
    *_, first = _drawn_whole(values, paired_sequence, limit=-0.03)
    assert first is not None and first <= 200, first


def _sequence(groups, scores, baseline, max_regression=0.1):
    order = RunOrder(seed=0, groups=groups, ranges={"accuracy": [0.0, 1.0]})
    regression = Regression(max_regression, {"accuracy": baseline})
    seq = SuiteSequence(order, [], regression=regression)
    for group in groups:
        for i in group:
            seq.add(i, True, {"accuracy": scores[i]}, {})
        if seq.decided:
            break
    return seq


@pytest.mark.parametrize(("drop", "failed"), [(0.0, False), (0.5, True)])
def test_the_suite_decides_its_regression_check_early_one_update_per_group(drop, failed):
    rng = np.random.default_rng(5)
    groups = [[f"g{g}/i{i}" for i in range(3)] for g in range(120)]
    ids = [i for group in groups for i in group]
    baseline = {i: float(rng.random() < 0.6) for i in ids}
    scores = {i: 0.0 if rng.random() < drop else v for i, v in baseline.items()}
    seq = _sequence(groups, scores, baseline)
    decision = seq.regressions["accuracy"]
    assert seq.decided and decision.failed is failed
    assert decision.sequence.n < len(ids) and decision.sequence.population == len(ids)
    assert seq._paired["accuracy"].cs.t == decision.sequence.n // 3  # one update per group
    bound = decision.sequence.high if failed else decision.sequence.low
    assert (bound < -0.1) if failed else (bound > -0.1)


def test_items_the_baseline_did_not_score_are_not_drawn():
    groups = [[f"g{g}/a", f"g{g}/b"] for g in range(150)]
    baseline = {group[0]: 1.0 for group in groups}  # only the first item of each group
    scores = {i: 1.0 for group in groups for i in group}
    seq = _sequence(groups, scores, baseline)
    assert seq.regressions["accuracy"].failed is False
    assert seq.regressions["accuracy"].sequence.population == 150


def test_a_check_still_open_after_every_shared_item_is_the_full_runs():
    groups = [[f"g{g}"] for g in range(20)]
    baseline = {g[0]: 1.0 for g in groups}
    scores = {g[0]: float(k % 2) for k, g in enumerate(groups)}  # a drop of 0.5, few items
    seq = _sequence(groups, scores, baseline, max_regression=0.45)
    assert "accuracy" not in seq.regressions and not seq.decided


@pytest.mark.parametrize("mode", MODES)
def test_a_run_with_a_baseline_stops_early_on_its_regression_check(toy100, mode):  # noqa: F811
    """A regression check no longer holds the stop back: against the same model's full
    record it is decided "no regression" by its sequence; against a baseline that scored
    every item right, "regression" (exit 1). The verdict and the baseline section say
    after how many of how many shared items, on what bounds."""
    result, full = run(toy100, name="base.json")
    assert result.ret == 0 and full["counts"]["items"] == ITEMS
    args = ("--stop-when-decided", "--gate", "toy/accuracy>=0.2", "--max-regression", "0.1", *mode)
    result, record = run(toy100, *args, "--baseline", "base.json")
    out = result.stdout.str()
    assert result.ret == 0, out
    counts, section = record["counts"], record["baseline"]
    assert counts["not_run"] > 0 and counts["items"] + counts["not_run"] == ITEMS
    check = next(c for c in section["comparisons"] if c["metric"] == "toy/accuracy")
    seq = check["sequence"]
    assert check["failed"] is False and seq["population"] == ITEMS and seq["n"] < ITEMS
    assert seq["low"] > -0.1 and check["ci_low"] == seq["low"]
    assert f"decided after {seq['n']} of {ITEMS} shared items" in check["verdict"]
    assert "stopped early (--stop-when-decided)" in section["reason"]
    # no speed against the baseline's: the stopped run's is its first groups'
    assert full["speed"] and section["speed"] == [] and "than the baseline" not in out
    compared = subprocess.run(
        [sys.executable, "-m", "extractbench.plugins.cli.main", "compare",
         str(toy100.path / "base.json"), str(toy100.path / "record.json")],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "toy: not compared, it stopped early (--stop-when-decided)" in compared
    assert "toy/items_per_s" not in compared
    # a baseline that scored every item right: the drop is found without running them all
    for item in full["items"]:
        item["scores"]["accuracy"] = 1.0
    (toy100.path / "perfect.json").write_text(json.dumps(full), encoding="utf-8")
    result, record = run(toy100, *args, "--baseline", "perfect.json", name="drop.json")
    assert result.ret == 1, result.stdout.str()
    check = next(c for c in record["baseline"]["comparisons"] if c["metric"] == "toy/accuracy")
    assert check["failed"] is True and check["sequence"]["high"] < -0.1
    assert record["counts"]["not_run"] > 0
    assert any(
        r.startswith("regression check toy/accuracy failed: regression beyond")
        for r in record["verdict"]["reasons"]
    )
