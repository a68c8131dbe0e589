"""Answer parsing for chat outputs: the same named rules for every backend and suite.

An instruct model answers in sentences a completion model does not write: it reasons in
``<think>`` blocks, restates the question's cue ("Answer:", "The answer is"), wraps JSON
or a table in a Markdown code fence, and starts with a newline or a space. With chat on,
each answer goes through these rules, in this order, before it is scored; which rules
touched it is logged with the call and counted in the run record. Completion-mode answers
are scored as generated (the papers' and lm-evaluation-harness's protocols).

Rules (``RULES``):

- ``think``: every ``<think>...</think>`` block is removed; an unclosed ``<think>`` (a
  budget spent on reasoning) leaves nothing after it.
- ``fence``: when the answer holds a fenced code block (three backticks, optional language),
  the answer is the first block's content.
- ``cue``: one restated cue at the start is removed: ``Answer:``, ``A:``, ``The answer
  is``, ``Final answer:``, or the item's own cue (FDA: ``applicant:``), case-insensitive,
  with a colon or ``is``.
- ``whitespace``: leading and trailing whitespace is removed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["RULES", "ParsedAnswer", "parse_answer", "first_content_stop"]

RULES = ("think", "fence", "cue", "whitespace")
_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.S | re.I)
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n(.*?)(?:\n```|\Z)", re.S)
# (cue, whether a colon must follow): "The answer is X" needs none
_GENERIC_CUES = (("final answer", True), ("the answer is", False), ("answer", True), ("a", True))


@dataclass(frozen=True)
class ParsedAnswer:
    """An answer after the rules.

    Attributes:
        text: what is scored.
        rules: the rules that changed it, in order (a subset of :data:`RULES`).
    """

    text: str
    rules: tuple[str, ...]


def _strip_cue(text: str, cues: Sequence[str]) -> str:
    own = [(cue.strip().rstrip(":").strip(), True) for cue in cues]
    for cue, colon in (*own, *_GENERIC_CUES):
        if not cue:
            continue
        end = r"\s*:" if colon else r"\s*:?"
        pattern = rf"^\s*(?:\*\*)?{re.escape(cue)}\b{end}(?:\*\*)?\s*"
        stripped = re.sub(pattern, "", text, count=1, flags=re.I)
        if stripped != text:
            return stripped
    return text


def parse_answer(text: str, cues: Sequence[str] = ()) -> ParsedAnswer:
    """Apply :data:`RULES` to a chat answer.

    Args:
        text: the model's answer.
        cues: the item's own cue words (FDA: the key; Table QA: none), tried before the
            generic ones.

    Returns:
        The :class:`ParsedAnswer` (``rules`` empty when nothing changed).
    """
    rules: list[str] = []
    out = text
    if "<think>" in out.lower():
        out = _THINK.sub("", out)
        rules.append("think")
    fence = _FENCE.search(out)
    if fence:
        out = fence.group(1)
        rules.append("fence")
    stripped = _strip_cue(out, cues)
    if stripped != out:
        out = stripped
        rules.append("cue")
    if out != out.strip():
        out = out.strip()
        rules.append("whitespace")
    return ParsedAnswer(out, tuple(rules))


def first_content_stop(text: str, stop: Sequence[str]) -> str:
    """``text`` cut at the first stop string that occurs after its first non-space
    character: a model that begins its answer with a newline is not cut to nothing by a
    newline stop (the Table-QA article's prompt ends without a cue).

    Args:
        text: a generation produced without the whitespace-only stop strings.
        stop: the item's stop strings.
    """
    start = len(text) - len(text.lstrip())
    cut = len(text)
    for s in stop:
        if s:
            at = text.find(s, start)
            if at != -1:
                cut = min(cut, at)
    return text[:cut]
