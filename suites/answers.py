"""Answer parsing for chat outputs: the same named rules for every backend and suite.

An instruct model answers in sentences a completion model does not write: it reasons in
``<think>`` blocks, restates the question's cue ("Answer:", "The answer is"), wraps JSON
or a table in a Markdown code fence, and starts with a newline or a space. With chat on,
each answer goes through these rules, in this order, before it is scored; which rules
touched it is logged with the call and counted in the run record. Completion-mode answers
are scored as generated (the papers' and lm-evaluation-harness's protocols), except for the
``think`` rule, which applies on every backend and in both modes
(:func:`finish_completion_answer`).

Rules (``RULES``):

- ``think``: every ``<think>...</think>`` block is removed; an unclosed ``<think>`` (a
  budget spent on reasoning) leaves nothing after it; a closing ``</think>`` without its
  opening tag (a template that opens the block in the prompt: DeepSeek-R1, QwQ) drops
  everything up to and including it. When the template is known to open the block
  (``opened``), the answer is read as beginning inside it: a reply that never closes it
  is reasoning only, and scores as empty.
- ``fence``: when the answer holds a fenced code block (three backticks, optional language),
  the answer is the first block's content.
- ``cue``: one restated cue at the start is removed: ``Answer:``, ``A:``, ``The answer
  is``, ``Final answer:``, or the item's own cue (FDA: ``applicant:``), case-insensitive,
  with a colon or ``is``.
- ``whitespace``: leading and trailing whitespace is removed.

In chat mode the stop strings of the call apply after ``think`` and ``fence`` and only
after the answer's first non-space character (:func:`finish_chat_answer`): the engine gets
the stop strings that are not whitespace only (:func:`engine_stops`), the rest cut here, so
a reasoning block or a fence that opens with a newline is not cut to nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from extractbench.suites import safe_json

__all__ = [
    "RULES", "ParsedAnswer", "parse_answer", "first_content_stop", "finish_chat_answer",
    "finish_completion_answer", "engine_stops", "prompt_cues", "json_in_answer",
]  # fmt: skip

RULES = ("think", "fence", "cue", "whitespace")
_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.S | re.I)
_THINK_CLOSE = re.compile(r"</think>", re.I)
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
        pattern = rf"^\s*(?:\*\*)?{re.escape(cue)}(?!\w){end}(?:\*\*)?\s*"
        stripped = re.sub(pattern, "", text, count=1, flags=re.I)
        if stripped != text:
            return stripped
    return text


def parse_answer(text: str, cues: Sequence[str] = (), opened: bool = False) -> ParsedAnswer:
    """Apply :data:`RULES` to a chat answer.

    Args:
        text: the model's answer.
        cues: the item's own cue words (FDA: the key; Table QA: none), tried before the
            generic ones.
        opened: the chat template opens a ``<think>`` block in the prompt (the answer
            begins inside it).

    Returns:
        The :class:`ParsedAnswer` (``rules`` empty when nothing changed).
    """
    return finish_chat_answer(text, (), cues, opened)


def _think(text: str, rules: list[str], opened: bool = False) -> str:
    """The ``think`` rule (``opened``: the answer begins inside a ``<think>`` block the
    prompt opened)."""
    out = f"<think>{text}" if opened else text
    if "think>" in out.lower():
        out = _THINK.sub("", out)
        closes = list(_THINK_CLOSE.finditer(out))  # closing tags whose opening was the prompt's
        if closes:
            out = out[closes[-1].end() :]
        if out != text:
            rules.append("think")
    return out


def finish_completion_answer(text: str) -> ParsedAnswer:
    """A completion-mode answer as it is scored: as generated (the papers' protocol), but
    for the ``think`` rule, on every backend: a model that reasons before a ``</think>``
    (with or without its opening tag) must not be credited for the values its reasoning
    mentions. ``rules`` is ``("think",)`` when it changed the answer, else empty."""
    rules: list[str] = []
    return ParsedAnswer(_think(text, rules), tuple(rules))


def _unwrap(text: str, rules: list[str], opened: bool = False) -> str:
    """The ``think`` and ``fence`` rules (``opened``: the answer begins inside a
    ``<think>`` block the prompt opened)."""
    out = _think(text, rules, opened)
    fence = _FENCE.search(out)
    if fence:
        out = fence.group(1)
        rules.append("fence")
    return out


def finish_chat_answer(
    text: str, stop: Sequence[str], cues: Sequence[str] = (), opened: bool = False
) -> ParsedAnswer:
    """A chat model's raw answer as it is scored: ``think`` and ``fence``, then the stop
    strings after the first non-space character (:func:`first_content_stop`), then
    ``cue`` and ``whitespace``.

    Args:
        text: the generation, made with :func:`engine_stops` of ``stop`` only.
        stop: the call's stop strings.
        cues: the item's own cue words (:func:`prompt_cues`).
        opened: the chat template opens a ``<think>`` block in the prompt
            (:attr:`fixtures.models.chat.ChatSetup.opens_think`): the answer begins inside
            it, and one that never closes it is empty.

    Returns:
        The :class:`ParsedAnswer` (``rules``: the rules that changed it).
    """
    rules: list[str] = []
    out = first_content_stop(_unwrap(text, rules, opened), stop)
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


def engine_stops(stop: Sequence[str]) -> tuple[str, ...]:
    """The stop strings an engine gets when the whitespace-only ones (``"\\n"``) apply
    only after the answer's first non-space character: those with a non-space character."""
    return tuple(s for s in stop if s.strip())


def prompt_cues(prompt: str) -> tuple[str, ...]:
    """The cue a prompt ends with, which a chat model may restate: its last line when that
    ends with a colon and is short (FDA's ``applicant:``, MINEA's ``Entities (JSON
    array):``); none otherwise."""
    last = prompt.rstrip().rpartition("\n")[2].strip()
    return (last,) if last.endswith(":") and len(last) <= 80 else ()


def json_in_answer(text: str) -> tuple[Any, str, str]:
    """The JSON value a model's answer holds: the one parser of MINEA's entity arrays and
    ``kv``'s schema objects.

    The value begins at the answer's first ``[`` (an array, MINEA's answer), or at its
    first ``{`` when that comes first and the answer begins with it; it runs to the end of
    the answer (text after it makes it invalid: an answer is scored as a whole). Parsed with
    :func:`suites.safe_json.loads` (nesting limited).

    Returns:
        (value, body, problem): the parsed value (None when it did not parse), the text
        from its first bracket on (``""`` when there is none), and ``""`` when the body
        is valid JSON as a whole, else one line saying why not (``no JSON array or
        object``, ``not valid JSON: ...``, ``nested deeper than 100 levels``).
    """
    start = text.find("[")
    brace = text.find("{")
    if start < 0 or (0 <= brace < start and text.lstrip().startswith("{")):
        start = brace
    if start < 0:
        return None, "", "no JSON array or object"
    body = text[start:].strip()
    try:
        return safe_json.loads(body), body, ""
    except json.JSONDecodeError as exc:
        return None, body, exc.msg if safe_json.too_deep(exc) else f"not valid JSON: {exc.msg}"
