"""The agreement statistic of two runs on the same items (plugins/verdict/agreement.py):
the exact McNemar p-value against values computed by hand and by scipy's binomial test,
and the paired interval: one that holds 0 when the runs differ only in a few swapped
items, one that excludes it when one run is clearly better."""

from __future__ import annotations

import math

import pytest

from extractbench.plugins.verdict.agreement import mcnemar_exact, paired_agreement


def test_mcnemar_exact_by_hand():
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)  # 2 * P(X <= 0), X ~ Bin(5, 1/2)
    assert mcnemar_exact(1, 9) == pytest.approx(2 * (1 + 10) / 1024)
    assert mcnemar_exact(9, 1) == mcnemar_exact(1, 9)
    with pytest.raises(ValueError):
        mcnemar_exact(-1, 2)


def test_mcnemar_exact_equals_a_two_sided_binomial_test():
    stats = pytest.importorskip("scipy.stats")
    for b, c in [(2, 7), (10, 13), (0, 1), (25, 40)]:
        assert mcnemar_exact(b, c) == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue)


def test_a_few_swapped_items_hold_zero_and_a_better_run_does_not():
    ids = [f"fda/{i}" for i in range(200)]
    base = {i: float(n % 2) for n, i in enumerate(ids)}  # accuracy 0.5
    swapped = dict(base)
    for n in range(6):  # three items gained, three lost
        swapped[ids[n]] = 1.0 - base[ids[n]]
    same = paired_agreement(swapped, base, {i: "x" for i in ids}, {i: "x" for i in ids})
    assert same.n == 200 and same.identical == 200 and same.difference == 0.0
    assert same.a_only == 3 and same.b_only == 3 and same.mcnemar_p == 1.0
    assert same.contains_zero and same.ci_low < 0 < same.ci_high
    better = {i: 1.0 if n < 150 else base[i] for n, i in enumerate(ids)}  # 0.5 -> 0.875
    gain = paired_agreement(better, base)
    assert gain.difference == pytest.approx(0.375) and gain.identical is None
    assert not gain.contains_zero and gain.ci_low > 0.25
    assert gain.mcnemar_p < 1e-15 and math.isclose(gain.accuracy_a, 0.875)
    assert gain.to_dict()["contains_zero"] is False


def test_only_shared_items_count_and_none_shared_is_an_error():
    partial = paired_agreement({"a": 1.0, "b": 0.5}, {"b": 0.25, "c": 1.0})
    assert partial.n == 1 and partial.difference == 0.25 and partial.mcnemar_p is None
    with pytest.raises(ValueError, match="share no item"):
        paired_agreement({"a": 1.0}, {"b": 1.0})
