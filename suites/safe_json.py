"""JSON parsing with a nesting limit: the one place the package turns JSON text into values.

Run records, data lines, caches, model and judge answers may nest arrays or objects
arbitrarily deep; the standard parser then raises ``RecursionError`` (around 1,000 levels)
and every recursive step after it (validation, redaction, dumping) would too. Here a
value nested deeper than :data:`MAX_DEPTH` is refused as invalid JSON, with the same
exception type as any other syntax error, so every caller's existing handling of bad JSON
covers it.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["MAX_DEPTH", "loads", "raw_decode", "too_deep"]

MAX_DEPTH = 100  # far beyond any record, data line or answer; far below the recursion limit

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_DECODER = json.JSONDecoder()


# a JSON string, as the unrolled loop "[^"\\]*(?:\\.[^"\\]*)*" (the same strings as
# "(?:[^"\\]|\\.)*", matched a run of plain characters at a time: 3-4x faster on MB texts)
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_AS_PARENS = str.maketrans("[{]}", "(())")


def _nests_deeper(text: str | bytes, limit: int) -> bool:
    """Whether ``text``, JSON that parsed, nests arrays or objects more than ``limit`` levels.

    Read from the text with the regular-expression engine and ``str.replace`` (C loops)
    rather than by walking the parsed value: strings out, brackets kept as ``(`` and ``)``,
    then each ``replace("()", "")`` removes the innermost pairs, exactly one level, so a
    text still holding brackets after ``limit`` passes nests deeper than ``limit``.
    """
    if isinstance(text, bytes):
        text = text.decode(json.detect_encoding(text), "replace")
    if text.count("[") + text.count("{") <= limit:  # too few brackets, in strings or not
        return False
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_AS_PARENS)
    for _ in range(limit):
        if not brackets:
            return False
        brackets = brackets.replace("()", "")
    return bool(brackets)


def _deep_at(text: str, limit: int, start: int = 0) -> int:
    """Index of the first bracket opening level ``limit + 1`` in ``text`` (0 if none)."""
    depth = 0
    for match in _TOKEN.finditer(text, start):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > limit:
                return match.start()
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)
    return 0


def _error(text: str, limit: int, start: int = 0) -> json.JSONDecodeError:
    return json.JSONDecodeError(
        f"nested deeper than {limit} levels", text, _deep_at(text, limit, start)
    )


def too_deep(exc: ValueError) -> bool:
    """Whether a :func:`loads` / :func:`raw_decode` error is the nesting limit (not syntax)."""
    return isinstance(exc, json.JSONDecodeError) and exc.msg.startswith("nested deeper than")


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH, **kwargs: Any) -> Any:
    """``json.loads(text, **kwargs)``, refusing values nested more than ``max_depth``.

    Args:
        text: the JSON text.
        max_depth: the most levels of arrays and objects allowed (default :data:`MAX_DEPTH`).
        kwargs: passed to :func:`json.loads` (``object_pairs_hook``, ...).

    Raises:
        json.JSONDecodeError: not valid JSON, or nested deeper than ``max_depth``
            (``msg`` "nested deeper than N levels", position of the first bracket too deep).
        ValueError: raised by a hook in ``kwargs``.
    """
    try:
        value = json.loads(text, **kwargs)
    except RecursionError:
        value = None
        deep = True
    else:
        deep = _nests_deeper(text, max_depth)
    if deep:
        source = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        raise _error(source, max_depth) from None
    return value


def raw_decode(text: str, pos: int = 0, *, max_depth: int = MAX_DEPTH) -> tuple[Any, int]:
    """One JSON value starting at ``text[pos]`` and the index after it
    (:meth:`json.JSONDecoder.raw_decode`), refusing values nested more than ``max_depth``.

    Raises:
        json.JSONDecodeError: not a JSON value there, or nested deeper than ``max_depth``.
    """
    try:
        value, end = _DECODER.raw_decode(text, pos)
    except RecursionError:
        raise _error(text, max_depth, pos) from None
    if _nests_deeper(text[pos:end], max_depth):
        raise _error(text, max_depth, pos)
    return value, end
