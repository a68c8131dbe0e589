"""Was a needle extracted? The six criteria of MINEA Section 5.2.3 (Tables 4-5).

Per needle, against the entities extracted from its document:

- ``n``: an entity's name equals the needle's name;
- ``ns``: the needle's name occurs in the extracted information, as whole words;
- ``k0.5``, ``k0.6``, ``k0.7``: one entity has at least that share of the needle's
  keywords among its own keywords (each keyword matched whole);
- ``llm``: the judge says one of the extracted entities is the needle (prompt after
  Appendix B3, Figure 8).

Names, keywords and the extracted text are compared after one normalisation
(:mod:`suites.minea.names`: case, punctuation, and for names titles). The per-type and
overall MINEA score built from these hits is :mod:`suites.minea.scoring`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from rapidfuzz import fuzz

from extractbench.suites.minea.extraction import entity_text, entity_values
from extractbench.suites.minea.names import contains_phrase, name_key, normalise
from extractbench.suites.minea.needles import Needle
from extractbench.suites.model import Backend, ask

__all__ = [
    "CRITERIA",
    "KEYWORD_THRESHOLDS",
    "match_needle",
    "judge_prompt",
    "JUDGE_GRAMMAR",
    "parse_verdict",
    "judge_needle",
]

KEYWORD_THRESHOLDS = (0.5, 0.6, 0.7)
CRITERIA = ("n", "ns", *(f"k{t}" for t in KEYWORD_THRESHOLDS), "llm")


def match_needle(needle: Needle, entities: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The five label-free criteria for one needle (``llm`` is :func:`judge_needle`).

    ``n``: :func:`~suites.minea.names.name_key` of the needle's name equals that of an
    entity's name; ``ns``: it occurs as whole words in one normalised property value of
    an entity (each keyword is a value of its own, so two keywords never join into a
    name); ``k<t>``: for one entity, the share of the needle's distinct
    normalised keywords among the entity's normalised keywords is at least ``t``.

    Returns:
        ``{"n": 0/1, "ns": 0/1, "k0.5": 0/1, "k0.6": 0/1, "k0.7": 0/1}``.
    """
    name = name_key(needle.name)
    names = {name_key(e.get("name", "")) for e in entities}
    values = [normalise(v) for e in entities for v in entity_values(dict(e))]
    wanted = {normalise(k) for k in needle.keywords} - {""}
    best = 0.0
    for entity in entities:
        have = {normalise(k) for k in entity.get("keywords", []) or []}
        if wanted:
            best = max(best, len(wanted & have) / len(wanted))
    found_in_text = any(contains_phrase(value, name) for value in values)
    hits = {"n": int(bool(name) and name in names), "ns": int(found_in_text)}
    for t in KEYWORD_THRESHOLDS:
        hits[f"k{t}"] = int(best >= t)
    return hits


# the judge's instruction: its system-role text in chat mode (the prompt begins with it)
JUDGE_INSTRUCTION = """You check an information extraction. Below is an entity (the "needle") that was hidden in a document, and entities that were extracted from that document.
Decide whether the needle was extracted: one of the extracted entities describes the same entity as the needle. Its name may be shortened or slightly different and its type may be misclassified, but it must be the same entity."""
JUDGE_TEMPLATE = (
    JUDGE_INSTRUCTION
    + """

Needle:
{needle}

Extracted entities:
{candidates}

Answer with the JSON object {{"extracted": true}} or {{"extracted": false}}.
Answer: """
)

JUDGE_GRAMMAR = r"""root ::= "{\"extracted\": " ("true" | "false") "}"
"""


def judge_prompt(needle: Needle, candidates: Sequence[Mapping[str, Any]]) -> str:
    """The judge's prompt for one needle and its candidate entities (numbered JSON lines)."""
    shown = json.dumps(
        {"type": needle.type, "name": needle.name, "description": needle.description,
         "keywords": list(needle.keywords)}, ensure_ascii=False,
    )  # fmt: skip
    lines = "\n".join(
        f"{i}. {json.dumps(dict(e), ensure_ascii=False)}" for i, e in enumerate(candidates, 1)
    )
    return JUDGE_TEMPLATE.format(needle=shown, candidates=lines)


def parse_verdict(text: str) -> bool | None:
    """``True``/``False`` from the judge's answer, None when it cannot be read."""
    match = re.search(r'"extracted"\s*:\s*(true|false)', text, re.IGNORECASE)
    if match:
        return match.group(1).lower() == "true"
    word = text.strip().lower()
    if word.startswith(("yes", "true")):
        return True
    if word.startswith(("no", "false")):
        return False
    return None


def judge_needle(
    judge: Backend,
    needle: Needle,
    entities: Sequence[Mapping[str, Any]],
    candidates: int = 10,
    max_tokens: int = 16,
) -> tuple[int | None, dict[str, Any]]:
    """Criterion ``llm``: ask the judge whether ``needle`` is among ``entities``.

    Only the ``candidates`` entities most similar to the needle (rapidfuzz token-set ratio
    between the needle's name + keywords and the entity's text) are shown, which keeps
    the prompt short; with no entities the needle is not found and no call is made.

    Returns:
        (1, 0 or None when the answer cannot be read, facts for the run record).
    """
    if not entities:
        return 0, {"calls": 0}
    probe = " ".join([needle.name, *needle.keywords])
    ranked = sorted(entities, key=lambda e: -fuzz.token_set_ratio(probe, entity_text(dict(e))))[
        :candidates
    ]
    generation = ask(
        judge, judge_prompt(needle, ranked), max_tokens=max_tokens, grammar=JUDGE_GRAMMAR,
        system=JUDGE_INSTRUCTION,
    )  # fmt: skip
    verdict = parse_verdict(generation.text)
    facts = {"calls": 1, "answer": generation.text[:80], "prompt_tokens": generation.prompt_tokens}
    return (None if verdict is None else int(verdict)), facts
