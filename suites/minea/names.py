"""The one normalisation MINEA compares names, keywords and texts after (Section 5.2.3).

The paper's criteria compare a needle's name and keywords with extracted information and
note that a name "prone to modification (e.g., person name with and without title)" fails
the exact comparison (Section 5.2.3). Both ``n`` and ``ns`` therefore compare after the
same steps:

1. Unicode NFKC, case folded;
2. every run of characters that are neither letters nor digits (punctuation, quotes,
   hyphens, whitespace) becomes one space; leading and trailing spaces are dropped;
3. for names only (:func:`name_key`): leading honorifics (``Dr``, ``Mr``, ``Mrs``, ``Ms``,
   ``Miss``, ``Mx``, ``Prof``, ``Professor``, ``Sir``, ``Dame``, ``Rev``) and trailing
   post-nominals (``Jr``, ``Sr``, ``II``, ``III``, ``IV``, ``PhD``, ``MD``, ``DDS``, ``DVM``,
   ``Esq``) are removed, as long as a word is left.

``ns`` then looks for the needle's name key as whole words (:func:`contains_phrase`):
the needle "India" is found in "India's distributor" but not in "Indiana".
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["TITLES", "SUFFIXES", "normalise", "name_key", "contains_phrase"]

TITLES = frozenset(
    {"dr", "mr", "mrs", "ms", "miss", "mx", "prof", "professor", "sir", "dame", "rev"}
)
SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "phd", "md", "dds", "dvm", "esq"})
_NOT_WORD = re.compile(r"[\W_]+")


def normalise(text: object) -> str:
    """``text`` NFKC-normalised, case folded, every run of non-letters/digits one space,
    stripped: ``' "AI  Clan-Meeting." '`` -> ``"ai clan meeting"``."""
    folded = unicodedata.normalize("NFKC", str(text)).casefold()
    return _NOT_WORD.sub(" ", folded).strip()


def name_key(name: object) -> str:
    """:func:`normalise` of a name without leading titles and trailing post-nominals
    (kept when nothing else is left): ``"Dr. Jane Smith, PhD"`` -> ``"jane smith"``."""
    words = normalise(name).split()
    while len(words) > 1 and words[0] in TITLES:
        words.pop(0)
    while len(words) > 1 and words[-1] in SUFFIXES:
        words.pop()
    return " ".join(words)


def contains_phrase(text_key: str, phrase_key: str) -> bool:
    """Whether ``phrase_key`` occurs in ``text_key`` as whole words (both already
    normalised by :func:`normalise` or :func:`name_key`); False for an empty phrase.

    The same test as ``f" {phrase_key} " in f" {text_key} "``, without copying the text
    (a document's decoys test thousands of names against it)."""
    if not phrase_key:
        return False
    size, start = len(phrase_key), text_key.find(phrase_key)
    while start != -1:
        end = start + size
        if (start == 0 or text_key[start - 1] == " ") and (
            end == len(text_key) or text_key[end] == " "
        ):
            return True
        start = text_key.find(phrase_key, start + 1)
    return False
