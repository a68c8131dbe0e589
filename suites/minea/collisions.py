"""Needles that cannot be told apart: shared keywords and names that occur elsewhere.

Two needles of one document that share several keywords let the keyword criteria credit
one for the other (Section 5.2.3: k0.5 needs half of six keywords), and a needle whose name
occurs in the document, or in another needle's paragraph, lets ``ns`` find it where it was
never extracted. Needles are therefore chosen per document so that

- no two share more than :data:`MAX_SHARED_KEYWORDS` keyword (normalised as in
  :mod:`suites.minea.names`), and
- no needle's name (its name key) occurs as whole words in the haystack or in another
  chosen needle's paragraph;

:func:`select_needles` applies both when dealing, and :func:`check_infusion` counts any
that remain in an enriched document (the item fails when a count is not 0).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from extractbench.suites.minea.names import contains_phrase, name_key, normalise
from extractbench.suites.minea.needles import Needle

__all__ = [
    "MAX_SHARED_KEYWORDS",
    "keyword_set",
    "shared_keywords",
    "select_needles",
    "check_infusion",
]

MAX_SHARED_KEYWORDS = 1


def keyword_set(needle: Needle) -> frozenset[str]:
    """The needle's distinct non-empty normalised keywords."""
    return frozenset(normalise(k) for k in needle.keywords) - {""}


def shared_keywords(a: Needle, b: Needle) -> int:
    """How many normalised keywords ``a`` and ``b`` have in common."""
    return len(keyword_set(a) & keyword_set(b))


@dataclass(frozen=True)
class _Normalised:
    """What the conflict checks read of a needle, normalised once per selection: its name
    key, its paragraph and its keyword set."""

    key: str
    paragraph: str
    keywords: frozenset[str]

    @classmethod
    def of(cls, needle: Needle) -> _Normalised:
        return cls(name_key(needle.name), normalise(needle.paragraph), keyword_set(needle))


def _conflict(
    candidate: _Normalised, chosen: Iterable[_Normalised], haystack_key: str
) -> str | None:
    """Why ``candidate`` cannot join ``chosen`` in a document, or None."""
    if contains_phrase(haystack_key, candidate.key):
        return "name_in_document"
    for other in chosen:
        if contains_phrase(other.paragraph, candidate.key) or contains_phrase(
            candidate.paragraph, other.key
        ):
            return "name_in_other_needle"
        if len(candidate.keywords & other.keywords) > MAX_SHARED_KEYWORDS:
            return "shared_keywords"
    return None


def select_needles(haystack: str, window: Sequence[Needle]) -> tuple[list[Needle], Counter[str]]:
    """The needles of ``window``, in order, that can go into ``haystack`` together: each
    is kept when it conflicts neither with the haystack nor with those kept before it.

    Returns:
        (kept needles, count of left-out needles by reason: ``name_in_document``,
        ``name_in_other_needle``, ``shared_keywords``).
    """
    haystack_key = normalise(haystack)
    kept: list[Needle] = []
    kept_facts: list[_Normalised] = []
    skipped: Counter[str] = Counter()
    for needle in window:
        facts = _Normalised.of(needle)
        why = _conflict(facts, kept_facts, haystack_key)
        if why is None:
            kept.append(needle)
            kept_facts.append(facts)
        else:
            skipped[why] += 1
    return kept, skipped


def check_infusion(haystack: str, needles: Sequence[Needle]) -> dict[str, int]:
    """Conflicts left among the needles infused into ``haystack`` (0 and 0 when dealt by
    :func:`select_needles`).

    Returns:
        ``{"shared_keyword_pairs": pairs sharing more than MAX_SHARED_KEYWORDS keyword,
        "name_collisions": needles whose name occurs as whole words in the haystack or in
        another needle's paragraph}``.
    """
    haystack_key = normalise(haystack)
    pairs = sum(shared_keywords(a, b) > MAX_SHARED_KEYWORDS for a, b in combinations(needles, 2))
    paragraphs = [normalise(n.paragraph) for n in needles]
    collisions = 0
    for i, needle in enumerate(needles):
        key = name_key(needle.name)
        elsewhere = [haystack_key, *(p for j, p in enumerate(paragraphs) if j != i)]
        collisions += any(contains_phrase(text, key) for text in elsewhere)
    return {"shared_keyword_pairs": pairs, "name_collisions": collisions}
