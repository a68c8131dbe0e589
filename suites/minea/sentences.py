"""Sentences of a text, as MINEA's similarity and encoder windows split it."""

from __future__ import annotations

import re

__all__ = ["sentences"]

_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_WORDS = re.compile(r"\w+")


def sentences(text: str) -> list[str]:
    """``text`` split after ``.``, ``!``, ``?`` and at line breaks; pieces without a word
    are dropped."""
    return [s for s in (p.strip() for p in _SENTENCES.split(text)) if _WORDS.search(s)]
