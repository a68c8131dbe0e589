"""String and sequence similarity used by the H-Score (Struc-Bench Appendix D.2).

Struc-Bench's ``score/table_scores.py`` (L13-21) scores every comparison twice, by a
normalised Levenshtein similarity and by difflib's Ratcliff/Obershelp ratio, and the
H-Score sums such pairs. Both functions accept strings or lists of strings (cell lists,
tag sequences), compared element by element, and both have the scripts' exact definition
(``reference=True``, :mod:`suites.strucbench.hscore_reference`) and the corrected one
(the default, :mod:`suites.strucbench.hscore`).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein

__all__ = ["levenshtein_similarity", "difflib_similarity"]


def levenshtein_similarity(
    pred: str | Sequence[str], gold: str | Sequence[str], *, reference: bool = False
) -> float:
    """``1 - Levenshtein(pred, gold) / (2 * len(gold))`` (``table_scores.py`` L13-17).

    Half credit per edit relative to the gold length, computed with rapidfuzz (strings, or
    lists of hashable items edited whole).

    Args:
        reference: the scripts' definition: unclamped (range (-inf, 1]; a prediction much
            longer than the gold goes negative) and 0.0 whenever the gold is empty.
            Otherwise (corrections ``levenshtein_clamped``, ``empty_equals_empty``)
            clamped to [0, 1], and 1.0 when both are empty.
    """
    if len(gold) == 0:
        return 1.0 if len(pred) == 0 and not reference else 0.0
    value = 1.0 - Levenshtein.distance(pred, gold) / (2 * len(gold))
    return value if reference else max(0.0, value)


def difflib_similarity(
    pred: str | Sequence[str], gold: str | Sequence[str], *, reference: bool = False
) -> float:
    """Ratcliff/Obershelp ratio, ``difflib.SequenceMatcher(None, pred, gold).ratio()``
    (``table_scores.py`` L19-21), in [0, 1]; 1.0 when both are empty.

    rapidfuzz has no Ratcliff/Obershelp (its Indel ratio differs), so difflib is used.

    Args:
        reference: the scripts' definition, with difflib's autojunk heuristic on (in a
            sequence of 200 or more items, those filling over 1% are ignored as junk).
            Otherwise autojunk is off (correction ``difflib_autojunk_off``).
    """
    return difflib.SequenceMatcher(None, pred, gold, autojunk=reference).ratio()
