"""String and sequence similarity used by the H-Score (Struc-Bench Appendix D.2).

Struc-Bench's ``score/table_scores.py`` (L13-21) scores every comparison twice, by a
normalised Levenshtein similarity and by difflib's Ratcliff/Obershelp ratio, and the
H-Score sums such pairs. Both functions accept strings or lists of strings (cell lists,
tag sequences), compared element by element.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein

__all__ = ["levenshtein_similarity", "difflib_similarity", "similarity"]


def levenshtein_similarity(pred: str | Sequence[str], gold: str | Sequence[str]) -> float:
    """``1 - Levenshtein(pred, gold) / (2 * len(gold))``, clamped to [0, 1].

    Struc-Bench's normalisation (``table_scores.py`` L13-17): half credit per edit
    relative to the gold length; 1.0 when both are empty, 0.0 when only gold is empty.
    Computed with rapidfuzz (works on strings and on lists of hashable items).
    """
    if len(gold) == 0:
        return 1.0 if len(pred) == 0 else 0.0
    distance = Levenshtein.distance(
        list(pred) if not isinstance(pred, str) else pred,
        list(gold) if not isinstance(gold, str) else gold,
    )
    return max(0.0, 1.0 - distance / (2 * len(gold)))


def difflib_similarity(pred: str | Sequence[str], gold: str | Sequence[str]) -> float:
    """Ratcliff/Obershelp ratio, ``difflib.SequenceMatcher(None, pred, gold).ratio()``.

    rapidfuzz has no Ratcliff/Obershelp (its Indel ratio differs), so difflib is used;
    autojunk is off so long sequences are compared exactly. 1.0 when both are empty.
    """
    if len(pred) == 0 and len(gold) == 0:
        return 1.0
    return difflib.SequenceMatcher(None, pred, gold, autojunk=False).ratio()


def similarity(pred: str | Sequence[str], gold: str | Sequence[str]) -> float:
    """Mean of :func:`levenshtein_similarity` and :func:`difflib_similarity` (paper 3.3.2)."""
    return (levenshtein_similarity(pred, gold) + difflib_similarity(pred, gold)) / 2
