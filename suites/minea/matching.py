"""Was a needle extracted? The six criteria and the MINEA score (Section 5.2.3, Tables 3-5).

Per needle, against the entities extracted from its document:

- ``n``: an entity's name equals the needle's name;
- ``ns``: the needle's name occurs anywhere in the extracted information;
- ``k0.5``, ``k0.6``, ``k0.7``: one entity has at least that share of the needle's
  keywords among its own keywords (each keyword matched exactly);
- ``llm``: the judge says one of the extracted entities is the needle (prompt after
  Appendix B3, Figure 8).

Comparisons are case-insensitive after collapsing whitespace and stripping surrounding
quotes and punctuation. MINEA of a type is the maximum over criteria of the share of its
needles found (Table 5, highlighted values); overall MINEA is the needle-weighted mean of
the per-type values (Table 3: 0.780 over 695 needles is exactly that weighted mean).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rapidfuzz import fuzz

from suites.minea.extraction import entity_text
from suites.minea.needles import Needle
from suites.model import Backend, ask

__all__ = [
    "CRITERIA",
    "KEYWORD_THRESHOLDS",
    "normalise",
    "match_needle",
    "judge_prompt",
    "JUDGE_GRAMMAR",
    "parse_verdict",
    "judge_needle",
    "criteria_table",
    "minea_scores",
]

KEYWORD_THRESHOLDS = (0.5, 0.6, 0.7)
CRITERIA = ("n", "ns", *(f"k{t}" for t in KEYWORD_THRESHOLDS), "llm")
_SPACE = re.compile(r"\s+")
_EDGE = " \t\n\"'`.,;:!?()[]{}"


def normalise(text: str) -> str:
    """Casefolded, whitespace collapsed, surrounding quotes and punctuation stripped."""
    return _SPACE.sub(" ", str(text)).strip(_EDGE).casefold()


def match_needle(needle: Needle, entities: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The five label-free criteria for one needle (``llm`` is :func:`judge_needle`).

    Returns:
        ``{"n": 0/1, "ns": 0/1, "k0.5": 0/1, "k0.6": 0/1, "k0.7": 0/1}``.
    """
    name = normalise(needle.name)
    names = {normalise(e.get("name", "")) for e in entities}
    everything = normalise(" \n ".join(entity_text(dict(e)) for e in entities))
    wanted = {normalise(k) for k in needle.keywords} - {""}
    best = 0.0
    for entity in entities:
        have = {normalise(k) for k in entity.get("keywords", []) or []}
        if wanted:
            best = max(best, len(wanted & have) / len(wanted))
    hits = {"n": int(name in names), "ns": int(bool(name) and name in everything)}
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


def criteria_table(
    needles: Iterable[Mapping[str, Any]],
) -> dict[str, dict[str, dict[str, float | int | None]]]:
    """Share of needles found, per type and criterion (Table 5).

    Args:
        needles: ``{"type": ..., "hits": {criterion: 0/1/None}}`` per needle; None (a
            judge answer that could not be read) is left out of that criterion's share.

    Returns:
        ``{type: {criterion: {"share": float | None, "n": int}}}`` plus ``"needles"``
        (the type's needle count) under each type's ``"_count"`` key, types sorted.
    """
    values: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    counts: dict[str, int] = defaultdict(int)
    for row in needles:
        counts[row["type"]] += 1
        for criterion in CRITERIA:
            hit = row["hits"].get(criterion)
            if hit is not None:
                values[row["type"]][criterion].append(int(hit))
    table: dict[str, dict[str, Any]] = {}
    for type_name in sorted(counts):
        entry: dict[str, Any] = {"_count": counts[type_name]}
        for criterion in CRITERIA:
            got = values[type_name][criterion]
            entry[criterion] = {"share": sum(got) / len(got) if got else None, "n": len(got)}
        table[type_name] = entry
    return table


def minea_scores(table: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """MINEA per type (maximum over criteria, Table 3/5) and overall (needle-weighted mean).

    ``overall_label_free`` is the same without the ``llm`` criterion: a weak judge that
    says yes to everything cannot inflate it.

    Returns:
        ``{"per_type": {type: {"minea", "criterion", "needles"}}, "overall": float | None,
        "overall_label_free": float | None, "needles": int}``.
    """

    def best_of(criteria: Sequence[str]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for type_name, entry in table.items():
            shares = [(entry[c]["share"], c) for c in criteria if entry[c]["share"] is not None]
            if shares:
                best, criterion = max(shares, key=lambda pair: pair[0])
                out[type_name] = {"minea": best, "criterion": criterion, "needles": entry["_count"]}
        return out

    def weighted(per_type: Mapping[str, Mapping[str, Any]]) -> float | None:
        total = sum(v["needles"] for v in per_type.values())
        return sum(v["minea"] * v["needles"] for v in per_type.values()) / total if total else None

    per_type = best_of(CRITERIA)
    return {
        "per_type": per_type,
        "overall": weighted(per_type),
        "overall_label_free": weighted(best_of([c for c in CRITERIA if c != "llm"])),
        "needles": sum(v["needles"] for v in per_type.values()),
    }
