"""Agreement of two runs of one model on the same items (a GPU and a CPU build, two
backends), stated as a release gate needs it: not whether the texts are identical (greedy
answers of a 4-bit model differ across kernels) but whether the scores agree.

For per-item scores ``a_i`` and ``b_i`` (0/1 for containment) on the items both answered:
the accuracy of each, the paired difference ``mean(a_i - b_i)`` with its paired-bootstrap
95% interval (items resampled as pairs: :func:`plugins.verdict.baseline.paired_bootstrap`,
Efron & Tibshirani 1993, ch. 13), and for binary scores the exact McNemar test of the
discordant pairs (McNemar 1947; exact form: a two-sided binomial test of ``b`` successes in
``b + c`` trials at 1/2, Fagerland, Lydersen & Laake 2013). The interval containing 0 is
what "the same accuracy" can mean on n items.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np

from extractbench.plugins.verdict.baseline import paired_bootstrap

__all__ = ["Agreement", "mcnemar_exact", "paired_agreement"]


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: ``min(1, 2 * P(X <= min(b, c)))`` for
    ``X ~ Binomial(b + c, 1/2)``; 1.0 without discordant pairs.

    Args:
        b: pairs the first run scored right and the second wrong.
        c: pairs the second run scored right and the first wrong.

    Raises:
        ValueError: a negative count.
    """
    if b < 0 or c < 0:
        raise ValueError(f"mcnemar_exact needs counts >= 0, got {b} and {c}")
    m = b + c
    if m == 0:
        return 1.0
    tail = sum(math.comb(m, k) for k in range(min(b, c) + 1)) / 2**m
    return min(1.0, 2 * tail)


@dataclass(frozen=True)
class Agreement:
    """Two runs on their shared items.

    Attributes:
        n: items both answered.
        identical: items whose answer texts are identical (None: texts not given).
        accuracy_a, accuracy_b: mean score of each run on the shared items.
        difference: ``accuracy_a - accuracy_b``.
        ci_low, ci_high: its paired-bootstrap 95% interval.
        a_only, b_only: binary scores: items only run a (b) scored right.
        mcnemar_p: the exact McNemar p-value (None: scores not binary).
    """

    n: int
    identical: int | None
    accuracy_a: float
    accuracy_b: float
    difference: float
    ci_low: float
    ci_high: float
    a_only: int | None
    b_only: int | None
    mcnemar_p: float | None

    @property
    def contains_zero(self) -> bool:
        """The interval holds 0: no accuracy difference shown on these items."""
        return self.ci_low <= 0.0 <= self.ci_high

    def to_dict(self) -> dict[str, object]:
        """JSON-safe form, with ``contains_zero``."""
        return {**asdict(self), "contains_zero": self.contains_zero}


def paired_agreement(
    a: Mapping[str, float],
    b: Mapping[str, float],
    texts_a: Mapping[str, str] | None = None,
    texts_b: Mapping[str, str] | None = None,
) -> Agreement:
    """The agreement of two runs' per-item scores (item id -> score) on the items both hold.

    Raises:
        ValueError: the runs share no item.
    """
    shared = sorted(set(a) & set(b))
    if not shared:
        raise ValueError("the two runs share no item")
    x = np.array([a[i] for i in shared], dtype=float)
    y = np.array([b[i] for i in shared], dtype=float)
    low, high = paired_bootstrap(x - y)
    binary = bool(np.isin(x, (0.0, 1.0)).all() and np.isin(y, (0.0, 1.0)).all())
    a_only = int(((x == 1) & (y == 0)).sum()) if binary else None
    b_only = int(((x == 0) & (y == 1)).sum()) if binary else None
    identical = None
    if texts_a is not None and texts_b is not None:
        identical = sum(texts_a.get(i) == texts_b.get(i) for i in shared)
    return Agreement(
        n=len(shared), identical=identical, accuracy_a=float(x.mean()),
        accuracy_b=float(y.mean()), difference=float((x - y).mean()), ci_low=low, ci_high=high,
        a_only=a_only, b_only=b_only,
        mcnemar_p=mcnemar_exact(a_only, b_only) if a_only is not None and b_only is not None else None,
    )  # fmt: skip
