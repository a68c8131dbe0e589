from __future__ import annotations

import pytest

from extractbench.plugins.verdict.stats import bootstrap_interval, estimate, wilson_interval


def test_wilson_matches_published_values():
    # Newcombe (1998), Stat. Med. 17:857, Table I: 81/263 -> 0.2553, 0.3662
    low, high = wilson_interval(81, 263)
    assert low == pytest.approx(0.2553, abs=5e-5)
    assert high == pytest.approx(0.3662, abs=5e-5)
    # 15/148 -> 0.0624, 0.1605 (same table)
    low, high = wilson_interval(15, 148)
    assert (round(low, 4), round(high, 4)) == (0.0624, 0.1605)


def test_wilson_edges_stay_in_unit_interval():
    assert wilson_interval(0, 10)[0] == 0.0
    assert wilson_interval(10, 10)[1] == 1.0
    assert 0 < wilson_interval(0, 10)[1] < 0.35


@pytest.mark.parametrize("bad", [(1, 0), (-1, 5), (6, 5)])
def test_wilson_rejects_impossible_counts(bad):
    with pytest.raises(ValueError):
        wilson_interval(*bad)


def test_bootstrap_is_deterministic_and_brackets_the_mean():
    values = [0.1, 0.5, 0.9, 0.3, 0.7, 0.2, 0.8]
    first = bootstrap_interval(values)
    assert first == bootstrap_interval(values)
    assert first[0] < sum(values) / len(values) < first[1]


def test_estimate_picks_method_by_value_kind():
    assert estimate([1.0, 0.0, 1.0]).method == "wilson"
    assert estimate([1.0, 0.5, 0.0]).method == "bootstrap"
    single = estimate([0.4])
    assert (single.method, single.ci_low, single.ci_high) == ("none", 0.4, 0.4)
    with pytest.raises(ValueError):
        estimate([])
