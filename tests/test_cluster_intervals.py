"""The fixed-n 95% interval of items in groups (items sharing a prompt prefix): the Wilson
interval on the design-effect sample size for a 0/1 metric, the cluster bootstrap for a
continuous one, and the independent-items interval, unchanged, when every item is its own
group. Coverage is measured on simulated suites whose groups are correlated (each group's
own success rate drawn from a beta distribution), groups of unequal size as FDA's chunks."""

from __future__ import annotations

import numpy as np
import pytest

from extractbench.plugins.verdict.aggregate import aggregate
from extractbench.plugins.verdict.baseline import compare_records
from extractbench.plugins.verdict.stats import (
    bootstrap_interval,
    cluster_bootstrap_interval,
    effective_n,
    estimate,
    t_quantile,
    wilson_interval,
)
from tests.conftest import read_json

MU = 0.45  # the mean of the distribution the items come from: what a 95% interval covers


def grouped_suite(
    rng: np.random.Generator, groups: int, icc: float, continuous: bool = False
) -> tuple[list[float], list[str]]:
    """One simulated suite: ``groups`` groups of 1 to 20 items (FDA's 152 chunks hold 1 to
    14 fields, 10.6 on average), each group's success rate drawn from a beta distribution
    of mean :data:`MU` whose intra-class correlation is ``icc`` (``1 / (a + b + 1)``); the
    items are 0/1 draws at that rate, or (``continuous``) beta-distributed scores of that
    mean."""
    ab = 1 / icc - 1
    sizes = rng.integers(1, 21, size=groups)
    rates = np.repeat(rng.beta(MU * ab, (1 - MU) * ab, size=groups), sizes)
    if continuous:
        values = rng.beta(rates * 4 + 1e-9, (1 - rates) * 4 + 1e-9)
    else:
        values = (rng.random(rates.size) < rates).astype(float)
    return values.tolist(), np.repeat(np.arange(groups), sizes).astype(str).tolist()


def coverage(
    runs: int, groups: int, icc: float, continuous: bool, seed: int
) -> tuple[float, float]:
    """(independent-items interval, clustered interval): the share of ``runs`` simulated
    suites whose 95% interval holds :data:`MU`."""
    rng = np.random.default_rng(seed)
    naive = clustered = 0
    for _ in range(runs):
        values, ids = grouped_suite(rng, groups, icc, continuous)
        if continuous:
            low, high = bootstrap_interval(values)
        else:
            low, high = wilson_interval(int(sum(values)), len(values))
        naive += low <= MU <= high
        est = estimate(values, ids)
        clustered += est.ci_low <= MU <= est.ci_high
    return naive / runs, clustered / runs


@pytest.mark.parametrize(("groups", "icc"), [(30, 0.2), (10, 0.3)])
def test_wilson_on_the_design_effect_covers_correlated_groups(groups, icc):
    """2,000 suites (a coverage's standard error about 0.5 points): the Wilson interval
    that takes a group's items as independent covers the mean in about 70% of them, the
    design-effect one in about 95%."""
    naive, clustered = coverage(2000, groups, icc, continuous=False, seed=groups)
    assert naive < 0.80, naive
    assert 0.93 <= clustered <= 0.97, clustered


def test_cluster_bootstrap_covers_correlated_groups():
    """400 continuous suites of 15 groups (standard error about 1.1 points): the item
    bootstrap covers about 60%, the expanded cluster bootstrap about 95%."""
    naive, clustered = coverage(400, 15, 0.3, continuous=True, seed=7)
    assert naive < 0.80, naive
    assert 0.92 <= clustered <= 0.98, clustered


@pytest.mark.slow
@pytest.mark.parametrize(
    ("groups", "icc", "low", "high"),
    [(5, 0.05, 0.93, 0.99), (5, 0.5, 0.90, 0.96), (100, 0.05, 0.93, 0.97), (100, 0.5, 0.93, 0.97)],
)
def test_design_effect_coverage_from_few_to_many_groups(groups, icc, low, high):
    """The design-effect interval from 5 to 100 groups, weakly and strongly correlated
    (4,000 suites each, standard error about 0.35 points): about 95% on 100 groups; on 5
    it errs on the safe side when groups barely differ (about 98%: the t correction for 4
    degrees of freedom) and covers about 92% when they differ much."""
    _, clustered = coverage(4000, groups, icc, continuous=False, seed=groups + int(icc * 100))
    assert low <= clustered <= high, clustered


def test_items_each_in_their_own_group_keep_the_independent_interval():
    rng = np.random.default_rng(3)
    binary = (rng.random(57) < 0.4).astype(float).tolist()
    continuous = rng.random(57).tolist()
    ids = [f"g{i}" for i in range(57)]
    for values in (binary, continuous):
        assert estimate(values, ids) == estimate(values)
        assert estimate(values, ids).groups is None
    assert estimate(binary).method == "wilson" and estimate(continuous).method == "bootstrap"


def test_grouped_interval_is_wider_deterministic_and_names_its_groups():
    rng = np.random.default_rng(5)
    values, ids = grouped_suite(rng, 12, 0.3)
    est = estimate(values, ids)
    plain = estimate(values)
    assert (est.method, est.groups, est.n, est.mean) == ("wilson_deff", 12, len(values), plain.mean)
    assert est.ci_low < plain.ci_low and est.ci_high > plain.ci_high
    assert estimate(values, ids) == est
    scores, ids = grouped_suite(rng, 12, 0.3, continuous=True)
    cont = estimate(scores, ids)
    assert (cont.method, cont.groups) == ("cluster_bootstrap", 12)
    assert cont == estimate(scores, ids)
    assert cont.ci_low < cont.mean < cont.ci_high


def test_effective_n_is_n_over_the_design_effect():
    """Groups all right or all wrong: every item repeats its group's answer, so the
    effective n is about the number of groups (deff = m), scaled by (t_{n-1} / t_{G-1})^2."""
    values = [1.0] * 4 * 5 + [0.0] * 4 * 5  # 10 groups of 4
    ids = [str(i // 4) for i in range(40)]
    ratio = (t_quantile(39) / t_quantile(9)) ** 2
    # the variance's G / (G - 1) factor makes the 10 groups count as 10 * 9 / 10
    assert effective_n(values, ids) == pytest.approx(9 * ratio)
    # uncorrelated within groups: the design effect is about 1, n* never above n
    spread = [1.0, 0.0, 1.0, 0.0] * 10
    assert effective_n(spread, ids) == pytest.approx(40 * ratio)


def test_one_group_bounds_nothing():
    """A single group says nothing about how groups differ: a 0/1 metric's interval is
    [0, 1], a continuous one's the mean alone (as for one item)."""
    one = estimate([1.0, 1.0, 0.0], ["a", "a", "a"])
    assert (one.ci_low, one.ci_high, one.groups) == (0.0, 1.0, 1)
    cont = estimate([0.2, 0.4], ["a", "a"])
    assert (cont.method, cont.ci_low, cont.ci_high) == (
        "none",
        pytest.approx(0.3),
        pytest.approx(0.3),
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda: estimate([1.0, 0.0], ["a"]),
        lambda: effective_n([1.0, 0.0], ["a", "a"]),
        lambda: cluster_bootstrap_interval([0.1, 0.2], ["a"]),
        lambda: cluster_bootstrap_interval([0.1, 0.2], ["a", "a"]),
    ],
)
def test_mismatched_or_single_groups_are_refused(call):
    with pytest.raises(ValueError):
        call()


def test_aggregate_reads_the_items_groups_overall_and_per_level():
    """The suite's interval counts its groups; a breakdown level whose items come from
    different groups keeps the independent interval; items without a group are their own."""
    items = []
    for doc in range(8):
        for key, right in (("a", doc % 2), ("b", doc % 2), ("c", doc < 3)):
            items.append(
                {"id": f"s/d{doc}/{key}", "group": f"s/d{doc}", "meta": {"key": key},
                 "scores": {"accuracy": float(right)}}
            )  # fmt: skip
    result = aggregate(items, {"s": ["key"]})["s/accuracy"]
    assert (result["ci_method"], result["groups"], result["n"]) == ("wilson_deff", 8, 24)
    level = result["breakdowns"]["key"]["a"]
    assert (level["ci_method"], level["groups"]) == ("wilson", None)
    loose = aggregate([{**it, "group": ""} for it in items], {})["s/accuracy"]
    assert (loose["ci_method"], loose["groups"]) == ("wilson", None)
    assert loose["ci_low"] > result["ci_low"]


@pytest.mark.parametrize(
    "args",
    [
        pytest.param([], id="serial"),
        pytest.param(["-n", "2"], id="xdist"),
        pytest.param(["--stop-when-decided"], id="stop-when-decided"),
    ],
)
def test_a_ci_low_gate_on_grouped_items_reads_the_clustered_interval(toy, args):
    """The toy suite's 24 items are 6 documents' 4 keys (15 right). Taken as independent
    items their Wilson interval's low end is 0.4271, above the gate; over 6 groups it is
    0.3833, below it: the gate fails, with ``--stop-when-decided`` too (an interval gate
    its sequence leaves open at the last group is decided on the fixed-n interval)."""
    record_path = toy.path / "record.json"
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", str(record_path),
        "--gate", "toy/accuracy:ci_low>=0.40", *args,
    )  # fmt: skip
    record = read_json(record_path)
    acc = record["aggregates"]["toy/accuracy"]
    assert (acc["ci_method"], acc["groups"], acc["n"]) == ("wilson_deff", 6, 24)
    assert acc["ci_low"] == pytest.approx(0.3833, abs=5e-5)
    (gate,) = [g for g in record["gates"] if g.get("stat") == "ci_low"]
    assert gate["passed"] is False and gate["value"] == acc["ci_low"]
    assert result.ret == 1, result.stdout.str()


def test_t_quantile_matches_published_values_and_scipy():
    """The t correction's quantile: the tables' values (R's ``qt(0.975, df)``) and scipy's
    ``t.ppf`` to 1e-11 relative, from 1 to 50,000 degrees of freedom."""
    published = {1: 12.7062047361747, 2: 4.30265272974946, 4: 2.77644510519779,
                 9: 2.26215716279820, 29: 2.04522964213270, 1000: 1.96233908082641}  # fmt: skip
    for df, value in published.items():
        assert t_quantile(df) == pytest.approx(value, rel=1e-12)
    stats = pytest.importorskip("scipy.stats")
    for df in [*range(1, 60), 151, 1606, 50_000]:
        assert t_quantile(df) == pytest.approx(stats.t.ppf(0.975, df), rel=1e-11)
    with pytest.raises(ValueError):
        t_quantile(0)


def paired_records(rng: np.random.Generator, groups: int, icc: float) -> tuple[dict, dict]:
    """A baseline and a current record of the same grouped suite whose per-group rates are
    drawn independently from one beta distribution (:func:`grouped_suite`'s): the expected
    paired difference is 0, and the differences of one group move together."""
    ab = 1 / icc - 1
    sizes = rng.integers(1, 21, size=groups)
    records = []
    for _ in range(2):
        rates = np.repeat(rng.beta(MU * ab, (1 - MU) * ab, size=groups), sizes)
        right = rng.random(rates.size) < rates
        items = [
            {"id": f"toy/{i}", "suite": "toy", "group": f"g{g}", "outcome": "passed",
             "scores": {"accuracy": float(r)}}
            for i, (g, r) in enumerate(zip(np.repeat(np.arange(groups), sizes), right, strict=True))
        ]  # fmt: skip
        records.append({"items": items})
    return records[0], records[1]


def paired_coverage(runs: int, groups: int, icc: float, seed: int, grouped: bool) -> float:
    """The share of ``runs`` simulated baseline comparisons whose paired interval
    (:func:`compare_records`) holds the true mean difference 0; ``grouped`` False drops
    the items' groups (the interval over items)."""
    rng = np.random.default_rng(seed)
    held = 0
    for _ in range(runs):
        base, cur = paired_records(rng, groups, icc)
        if not grouped:
            for item in cur["items"]:
                del item["group"]
        (cmp,) = compare_records(cur, base, None)
        held += cmp.ci_low <= 0 <= cmp.ci_high
    return held / runs


def test_the_baseline_check_resamples_a_documents_pairs_together():
    # 400 comparisons: a 95% coverage is measured to about +-1.1%
    grouped = paired_coverage(400, groups=30, icc=0.3, seed=11, grouped=True)
    items = paired_coverage(400, groups=30, icc=0.3, seed=11, grouped=False)
    assert 0.92 <= grouped <= 0.98, grouped
    assert items < 0.85, items  # the interval over items, too narrow on these groups
