"""Table-QA metrics: exact match as the article defines it (strict), after a documented
normalisation, and containment."""

from __future__ import annotations

import re

__all__ = [
    "MATCH_METRICS",
    "normalize_answer",
    "exact_match",
    "exact_match_normalized",
    "contains",
]

# tableqa.match -> the metric the results table and heatmaps show
MATCH_METRICS = {"strict": "exact_match", "normalized": "exact_match_normalized"}

_QUOTES = "\"'`«»“”„‘’"


def normalize_answer(text: str) -> str:
    """Normalise an answer for comparison.

    Steps, in order: keep the first non-empty line; collapse whitespace and trim; fold
    case; drop a final period; strip one layer of surrounding quotes (any of
    ``"'`«»“”„‘’``); drop a final period again (inside the quotes); trim. ``"  «Hard».\\n..."`` -> ``"hard"``.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    s = " ".join(lines[0].split()) if lines else ""
    s = s.casefold()
    if s.endswith("."):  # «Hard».
        s = s[:-1]
    if len(s) >= 2 and s[0] in _QUOTES and s[-1] in _QUOTES:
        s = s[1:-1].strip()
    if s.endswith("."):  # "Hard."
        s = s[:-1]
    return s.strip()


def exact_match(prediction: str, answer: str) -> float:
    """The article's metric ("1 if the answer matched, 0 otherwise", "Method" section).

    1.0 when the prediction, with surrounding whitespace trimmed, equals the cell value
    character for character; no other normalisation (the article names none). The trim
    only removes the space a completion model writes after the ``Answer:`` cue.
    """
    return 1.0 if prediction.strip() == answer.strip() else 0.0


def exact_match_normalized(prediction: str, answer: str) -> float:
    """1.0 when :func:`normalize_answer` of both is equal (case folded, quotes and a final
    period removed, first line only): a lenient variant, not the article's metric."""
    return 1.0 if normalize_answer(prediction) == normalize_answer(answer) else 0.0


def contains(prediction: str, answer: str) -> float:
    """Lenient: 1.0 when the normalised answer occurs anywhere in the case-folded prediction."""
    target = normalize_answer(answer)
    return (
        1.0
        if target and re.search(re.escape(target), " ".join(prediction.split()).casefold())
        else 0.0
    )
