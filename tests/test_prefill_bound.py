"""The per-length compute bound of benchmarks/prefill_bound.py: each prompt's new tokens
charged at their own positions, each call's decode at its own length."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "prefill_bound", Path(__file__).resolve().parents[1] / "benchmarks" / "prefill_bound.py"
)
pb = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("prefill_bound", pb)  # its dataclass resolves its module by name
_SPEC.loader.exec_module(pb)


def _curve(lengths, seconds, decode=None):
    return pb.Curve(tuple(lengths), tuple(seconds), tuple(decode or [10.0] * len(lengths)))


def test_a_constant_rate_charges_every_token_alike():
    curve = _curve([512, 1024], [1.0, 2.0])  # 512 tokens/s at every length
    assert curve.prefill_seconds(0, 256) == pytest.approx(0.5)
    assert curve.prefill_seconds(700, 956) == pytest.approx(0.5)
    assert curve.prefill_seconds(1024, 2048) == pytest.approx(2.0)  # the last slope beyond


def test_late_tokens_of_a_long_prompt_cost_more_than_early_ones():
    curve = _curve([512, 1024, 2048], [1.0, 3.0, 11.0])  # slower as the context grows
    early, late = curve.prefill_seconds(0, 512), curve.prefill_seconds(1536, 2048)
    assert early == pytest.approx(1.0) and late == pytest.approx(4.0)
    # the median-length rate (1024 tokens in 3 s) would charge the late tokens 1.5 s
    assert late > 512 / (1024 / 3.0)


def test_the_trie_counts_a_shared_prefix_once():
    sequences = [[1, 2, 4], [5], [1, 2, 3]]
    charges = pb.trie_charges(sequences)
    assert [(i, shared) for i, shared, _ in charges] == [(2, 0), (0, 2), (1, 0)]
    assert sum(length - shared for _, shared, length in charges) == 5


def test_the_bound_prefills_a_repeated_prompt_once_and_decodes_at_its_length():
    curve = _curve([4, 8], [4.0, 12.0], decode=[8.0, 4.0])
    prompt = [1, 2, 3, 4, 5, 6, 7, 8]
    once = pb.bound_seconds([prompt], [0], curve)
    twice = pb.bound_seconds([prompt, prompt], [0, 0], curve)
    assert once["prefill_s"] == twice["prefill_s"] == pytest.approx(12.0)
    assert twice["unique_tokens"] == 8 and twice["prompt_tokens"] == 16
    short = pb.bound_seconds([[1, 2]], [8], curve)  # 8 tokens decoded around length 6
    assert short["decode_s"] == pytest.approx(8 / 6.0)
    with pytest.raises(ValueError, match="generated counts"):
        pb.bound_seconds([prompt], [1, 2], curve)


def test_the_best_curve_takes_each_length_s_fastest_configuration():
    alone = _curve([512, 1024], [1.0, 4.0], decode=[20.0, 10.0])
    together = _curve([512, 1024], [1.5, 3.0], decode=[15.0, 12.0])
    best = pb.best_curve([alone, together])
    assert best.prefill_s == (1.0, 3.0) and best.decode_tok_s == (20.0, 12.0)
    with pytest.raises(ValueError, match="different lengths"):
        pb.best_curve([alone, _curve([512, 2048], [1.0, 4.0])])


def test_a_curve_refuses_lengths_out_of_order_or_missing_values():
    with pytest.raises(ValueError, match="increasing"):
        _curve([1024, 512], [1.0, 2.0])
    with pytest.raises(ValueError, match="one prefill time"):
        pb.Curve((512,), (), (1.0,))


def test_the_measured_lengths_double_up_to_the_longest_prompt():
    assert pb.curve_lengths(3000) == [512, 1024, 2048, 3000]
    assert pb.curve_lengths(300) == [300]
    assert pb.curve_lengths(1024) == [512, 1024]


def test_the_speed_ratio_moves_the_bound_to_the_run_s_speed():
    assert pb.speed_ratio(4.0, 4.0, 4.0) == 1.0  # the machine held its speed
    # slower only after the run (the curve measured 40% slower): the run's bound is lower
    assert pb.speed_ratio(5.0, 5.0, 9.0) == pytest.approx(10 / 14)
    # slower during the run, back to speed for the curve: the run's bound is higher
    assert pb.speed_ratio(7.0, 7.0, 5.0) == pytest.approx(14 / 12)
    with pytest.raises(ValueError, match="positive"):
        pb.speed_ratio(0.0, 1.0, 1.0)
