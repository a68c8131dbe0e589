"""Needle infusion (MINEA Section 5.2.2): needles at random natural boundaries of a haystack.

A needle's paragraph is inserted at the start of a paragraph of the haystack (a position
right after a blank line), followed by a blank line; a haystack without blank lines gets
needles at sentence starts, followed by a space. Needles are added until they make up a
target share of the enriched text, drawn uniformly from ``[min_share, max_share]``
(paper: 10-30%), seeded per document. Every inserted span is recorded, so removing the
spans gives back the original text byte for byte.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from extractbench.suites.minea.needles import Needle

__all__ = ["Infusion", "Placement", "boundaries", "infuse", "remove_needles"]

_PARAGRAPH_START = re.compile(r"\n[ \t]*\n+(?=\S)")
_SENTENCE_START = re.compile(r"(?<=[.!?])[ \t]+(?=[A-Z])")


@dataclass(frozen=True)
class Placement:
    """Where one needle went: ``enriched[start:end]`` is the inserted span
    (``paragraph + separator``); ``offset`` is the insertion point in the original text."""

    needle_id: str
    offset: int
    start: int
    end: int


@dataclass(frozen=True)
class Infusion:
    """An enriched document.

    Attributes:
        text: the haystack with the needles.
        placements: one per needle, in text order.
        share: inserted characters / len(text), in [0, 1].
        target: the share that was aimed at.
        boundary: ``paragraph`` or ``sentence``: the kind of boundary used.
    """

    text: str
    placements: tuple[Placement, ...]
    share: float
    target: float
    boundary: str


def boundaries(text: str) -> tuple[list[int], str]:
    """Insertion points: paragraph starts after the first paragraph, else sentence starts.

    Returns:
        (sorted character offsets, ``"paragraph"`` or ``"sentence"``); an empty list when
        the text has neither.
    """
    points = [m.end() for m in _PARAGRAPH_START.finditer(text)]
    if points:
        return points, "paragraph"
    return [m.end() for m in _SENTENCE_START.finditer(text)], "sentence"


def infuse(
    haystack: str,
    needles: Sequence[Needle],
    rng: random.Random,
    min_share: float = 0.10,
    max_share: float = 0.30,
) -> Infusion:
    """Insert needles from ``needles`` (in the given order) until their share of the
    enriched text reaches a target drawn from ``[min_share, max_share]``.

    A needle that would push the share above ``max_share`` is skipped (the next one is
    tried). Boundaries are drawn without replacement while any is left.

    Raises:
        ValueError: bounds outside ``0 < min_share <= max_share < 1``; a haystack without
            boundaries; or needles that cannot reach ``min_share`` within ``max_share``.
    """
    if not 0 < min_share <= max_share < 1:
        raise ValueError(f"needle share bounds {min_share}-{max_share}: need 0 < min <= max < 1")
    points, kind = boundaries(haystack)
    if not points:
        raise ValueError("the haystack has no paragraph or sentence boundary")
    separator = "\n\n" if kind == "paragraph" else " "
    target = rng.uniform(min_share, max_share)
    chosen: list[tuple[int, Needle]] = []
    free = list(points)
    inserted = 0
    for needle in needles:
        size = len(needle.paragraph) + len(separator)
        if (inserted + size) / (len(haystack) + inserted + size) > max_share:
            continue
        offset = free.pop(rng.randrange(len(free))) if free else rng.choice(points)
        chosen.append((offset, needle))
        inserted += size
        if inserted / (len(haystack) + inserted) >= target:
            break
    share = inserted / (len(haystack) + inserted)
    if share < min_share:
        raise ValueError(
            f"needles reach a share of {share:.3f}, below the minimum {min_share} "
            "(too few or too long needles for this haystack)"
        )
    chosen.sort(key=lambda pair: pair[0])  # stable: equal offsets keep needle order
    parts: list[str] = []
    placements: list[Placement] = []
    cursor = 0
    length = 0
    for offset, needle in chosen:
        parts.append(haystack[cursor:offset])
        length += offset - cursor
        span = needle.paragraph + separator
        placements.append(Placement(needle.id, offset, length, length + len(span)))
        parts.append(span)
        length += len(span)
        cursor = offset
    parts.append(haystack[cursor:])
    return Infusion("".join(parts), tuple(placements), share, target, kind)


def remove_needles(text: str, placements: Sequence[Placement]) -> str:
    """The original haystack: ``text`` without the recorded spans."""
    parts: list[str] = []
    cursor = 0
    for p in sorted(placements, key=lambda p: p.start):
        parts.append(text[cursor : p.start])
        cursor = p.end
    parts.append(text[cursor:])
    return "".join(parts)
