"""A run's compute bound with each prompt's prefill charged at its own context length.

Prefill and decode slow down as the context grows (attention reads every earlier token), so
a rate measured at one length misstates a suite whose prompts range from hundreds to many
thousands of tokens. This module holds the arithmetic ``suite_bounds.py`` uses, apart from
the measuring (``model_rates.curve_at``), so it can be tested without a model:

- a :class:`Curve`: the cumulative prefill time ``T(L)`` of the first ``L`` tokens of one
  long prompt, measured at a few lengths and interpolated linearly (``T(0) = 0``; beyond the
  last length, the last segment's slope), and the decode rate at each length;
- :func:`trie_charges`: for token sequences, what a perfect prefix cache prefills: each
  sequence after the longest prefix it shares with an earlier one in sorted order (the token
  trie's nodes, every distinct prefix once);
- :func:`bound_seconds`: each sequence's new tokens charged ``T(end) - T(start)`` and its
  generated tokens at the decode rate of its own length.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "Curve", "best_curve", "trie_charges", "bound_seconds", "curve_lengths", "speed_ratio"
]  # fmt: skip


@dataclass(frozen=True)
class Curve:
    """Prefill and decode cost by context length, for one configuration of processes.

    Attributes:
        lengths: context lengths in tokens, increasing, each > 0.
        prefill_s: cumulative seconds to prefill the first ``lengths[i]`` tokens from an
            empty cache (the throughput of all processes together: one process's time
            divided by the number of processes running at once).
        decode_tok_s: generated tokens per second at ``lengths[i]`` tokens of context (all
            processes together).
    """

    lengths: tuple[int, ...]
    prefill_s: tuple[float, ...]
    decode_tok_s: tuple[float, ...]

    def __post_init__(self) -> None:
        n = len(self.lengths)
        if n == 0 or len(self.prefill_s) != n or len(self.decode_tok_s) != n:
            raise ValueError("a curve needs one prefill time and one decode rate per length")
        if any(b <= a for a, b in zip((0, *self.lengths), self.lengths, strict=False)):
            raise ValueError(f"lengths must be positive and increasing: {self.lengths}")

    def prefill_until(self, length: float) -> float:
        """``T(length)``: seconds to prefill ``length`` tokens from an empty cache."""
        xs, ys = (0, *self.lengths), (0.0, *self.prefill_s)
        if length <= 0:
            return 0.0
        i = min(bisect.bisect_left(xs, length), len(xs) - 1)  # the segment (xs[i-1], xs[i]]
        slope = (ys[i] - ys[i - 1]) / (xs[i] - xs[i - 1])
        return ys[i - 1] + slope * (length - xs[i - 1])

    def prefill_seconds(self, start: int, end: int) -> float:
        """Seconds to prefill tokens ``start..end-1`` after ``start`` cached tokens."""
        return self.prefill_until(end) - self.prefill_until(start)

    def decode_rate(self, length: float) -> float:
        """Decode tokens/s at ``length`` tokens of context: linear between the measured
        lengths, the nearest measured rate outside them."""
        xs, ys = self.lengths, self.decode_tok_s
        if length <= xs[0]:
            return ys[0]
        if length >= xs[-1]:
            return ys[-1]
        i = bisect.bisect_left(xs, length)
        return ys[i - 1] + (ys[i] - ys[i - 1]) * (length - xs[i - 1]) / (xs[i] - xs[i - 1])


def best_curve(curves: Sequence[Curve]) -> Curve:
    """Length by length the fastest of several configurations (e.g. one process with every
    core, or two with one core each): the machine's best, as a bound should assume.

    Raises:
        ValueError: the curves were measured at different lengths.
    """
    lengths = curves[0].lengths
    if any(c.lengths != lengths for c in curves):
        raise ValueError("curves measured at different lengths")
    prefill = tuple(min(c.prefill_s[i] for c in curves) for i in range(len(lengths)))
    decode = tuple(max(c.decode_tok_s[i] for c in curves) for i in range(len(lengths)))
    return Curve(lengths, prefill, decode)


def curve_lengths(longest: int, first: int = 512) -> list[int]:
    """The lengths to measure for prompts of at most ``longest`` tokens: ``first``, doubling,
    then ``longest`` itself (multiples of the 512-token batch prefill the same way a whole
    prompt does)."""
    lengths, n = [], first
    while n < longest:
        lengths.append(n)
        n *= 2
    return [*lengths, max(longest, 1)]


def trie_charges(sequences: Sequence[Sequence[int]]) -> list[tuple[int, int, int]]:
    """``(index, shared, length)`` per sequence in sorted order: ``shared`` tokens are a
    prefix of the sequence before it (a perfect prefix cache holds them), ``length -
    shared`` are new. The sum of the new tokens is the number of nodes of the token trie."""
    order = sorted(range(len(sequences)), key=lambda i: list(sequences[i]))
    charges, previous = [], ()
    for i in order:
        seq, shared = sequences[i], 0
        for a, b in zip(seq, previous, strict=False):
            if a != b:
                break
            shared += 1
        charges.append((i, shared, len(seq)))
        previous = seq
    return charges


def bound_seconds(
    sequences: Sequence[Sequence[int]], generated: Sequence[int], curve: Curve
) -> dict[str, float]:
    """The compute bound of calls with these prompt tokens and generated token counts.

    Args:
        sequences: each call's prompt tokens.
        generated: each call's generated tokens (same order).
        curve: the machine's costs by length.

    Returns:
        ``prefill_s`` (every new token at its own position), ``decode_s`` (each call's
        tokens at the rate of its context's mean length while they are generated), ``bound_s`` (their sum), ``unique_tokens``,
        ``prompt_tokens``.

    Raises:
        ValueError: ``generated`` is not one count per sequence.
    """
    if len(generated) != len(sequences):
        raise ValueError(f"{len(generated)} generated counts for {len(sequences)} prompts")
    charges = trie_charges(sequences)
    prefill = sum(curve.prefill_seconds(shared, length) for _, shared, length in charges)
    decode = sum(
        n / curve.decode_rate(len(seq) + n / 2) for seq, n in zip(sequences, generated, strict=True)
    )
    return {
        "prefill_s": prefill,
        "decode_s": decode,
        "bound_s": prefill + decode,
        "unique_tokens": float(sum(length - shared for _, shared, length in charges)),
        "prompt_tokens": float(sum(len(s) for s in sequences)),
    }


def speed_ratio(before: float, after_run: float, after_curve: float) -> float:
    """How much slower the machine ran during a run than while its curve was measured.

    Args:
        before, after_run, after_curve: seconds of one fixed probe (a prefill of the same
            tokens in the run's configuration) taken before the run, right after it, and
            right after the curve (each > 0).

    Returns:
        ``mean(before, after_run) / mean(after_run, after_curve)`` (unitless; 1.0 when the
        machine held its speed): a bound computed from the curve, times this, is the bound
        at the speed the machine had during the run.

    Raises:
        ValueError: a probe time that is not positive.
    """
    if min(before, after_run, after_curve) <= 0:
        raise ValueError(f"probe seconds must be positive: {before}, {after_run}, {after_curve}")
    return (before + after_run) / (after_run + after_curve)


def main() -> None:
    """Print the curves of a ``suite_bounds.py --out`` result: per suite and length, the
    cumulative prefill time, the prefill rate it implies and the decode rate."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("result", type=Path, help="the JSON that suite_bounds.py --out wrote")
    args = parser.parse_args()
    for name, row in json.loads(args.result.read_text())["suites"].items():
        curve = Curve(*(tuple(row["curve"][k]) for k in ("lengths", "prefill_s", "decode_tok_s")))
        print(f"{name}: length, prefill s (cumulative), prefill tok/s, decode tok/s")
        for length, t, d in zip(curve.lengths, curve.prefill_s, curve.decode_tok_s, strict=True):
            print(f"  {length:>7,}  {t:8.2f}  {length / t:8.1f}  {d:6.1f}")


if __name__ == "__main__":
    main()
