"""One MINEA item end to end: extract the enriched document, match its needles, score the
extraction (the plain function behind ``test_minea``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from suites.item import Item
from suites.minea.encoder import load_encoder
from suites.minea.extraction import Extraction, extract_document
from suites.minea.matching import CRITERIA, judge_needle, match_needle
from suites.minea.needles import Needle
from suites.minea.quality import lost_in_the_middle, quality_scores
from suites.minea.schema import Schema
from suites.model import Backend, Generation

__all__ = ["DocumentResult", "evaluate_document"]


@dataclass
class DocumentResult:
    """What one document gives.

    Attributes:
        scores: per-item metrics: the share of the document's needles found under each
            criterion (``n``, ``ns``, ``k0.5``..., ``llm``); ``llm_false_positive``, the
            share of decoy needles (never infused into this document) the judge calls
            extracted, a control of the ``llm`` criterion; the quality scores of the final
            extraction; ``parse_failures`` (calls) and ``entities`` (count).
        needles: per needle ``{"id", "type", "name", "hits": {criterion: 0/1/None}}``.
        by_iteration: iterations -> quality scores of the entities up to that iteration.
        generation: all calls summed (prediction = the extracted entities as JSON).
        facts: calls, threads, pieces, judge calls, lost-in-the-middle redundancy.
    """

    scores: dict[str, float | None]
    needles: list[dict[str, Any]]
    by_iteration: dict[int, dict[str, float | None]]
    generation: Generation
    facts: dict[str, Any] = field(default_factory=dict)


def _summed(extraction: Extraction) -> Generation:
    entities = [e for _, _, e in extraction.entities]
    return Generation(
        text=json.dumps(entities, ensure_ascii=False),
        prompt_tokens=sum(c.prompt_tokens for c in extraction.calls),
        completion_tokens=sum(c.completion_tokens for c in extraction.calls),
        latency_s=sum(c.latency_s for c in extraction.calls),
    )


def evaluate_document(
    item: Item,
    model: Backend,
    judge: Backend | None,
    schema: Schema,
    options: Mapping[str, Any],
    wordnet: Any = None,
) -> DocumentResult:
    """Extract ``item.prompt`` (the enriched document) and score it.

    Args:
        item: a MINEA item (``meta["needles"]`` holds its needles).
        model: the model under test.
        judge: the judge for criterion ``llm``; None leaves ``llm`` not computed.
        schema: the extraction schema.
        options: ``iterations``, ``piece_chars``, ``max_tokens``, ``context_tokens``,
            ``judge_candidates``, ``lost_in_the_middle``, ``encoder`` (resolved:
            ``minilm`` or ``tfidf``; see ``items.DEFAULTS``).
        wordnet: WordNet for METEOR (tests); default nltk's when installed.

    Raises:
        ModelError: from the backend.
    """
    extraction = extract_document(
        model,
        schema,
        item.prompt,
        piece_chars=options["piece_chars"],
        iterations=options["iterations"],
        max_tokens=options["max_tokens"],
        context_tokens=options["context_tokens"],
        reextract=options["lost_in_the_middle"],
    )
    encoder = load_encoder() if options["encoder"] == "minilm" else None
    entities = [e for _, _, e in extraction.entities]
    needles = [Needle.from_json(n, item.id) for n in item.meta["needles"]]
    rows: list[dict[str, Any]] = []
    judge_calls = 0
    unreadable = 0
    for needle in needles:
        hits: dict[str, int | None] = dict(match_needle(needle, entities))
        if judge is not None:
            hits["llm"], facts = judge_needle(
                judge, needle, entities, candidates=options["judge_candidates"]
            )
            judge_calls += facts["calls"]
            unreadable += hits["llm"] is None
        else:
            hits["llm"] = None
        rows.append({"id": needle.id, "type": needle.type, "name": needle.name, "hits": hits})
    scores: dict[str, float | None] = {}
    for criterion in CRITERIA:
        got = [r["hits"][criterion] for r in rows if r["hits"][criterion] is not None]
        scores[criterion] = sum(got) / len(got) if got else None
    by_iteration = {
        k: quality_scores(item.prompt, extraction, schema, k, wordnet, encoder)
        for k in range(options["iterations"] + 1)
    }
    scores.update(by_iteration[options["iterations"]])
    if judge is not None and item.meta.get("decoys"):
        said_yes = []
        for row in item.meta["decoys"]:
            verdict, facts = judge_needle(
                judge, Needle.from_json(row, item.id), entities, options["judge_candidates"]
            )
            judge_calls += facts["calls"]
            if verdict is not None:
                said_yes.append(verdict)
        scores["llm_false_positive"] = sum(said_yes) / len(said_yes) if said_yes else None
    scores["parse_failures"] = float(extraction.parse_failures)
    scores["entities"] = float(len(entities))
    facts = {
        "calls": len(extraction.calls),
        "threads": extraction.threads,
        "pieces": len(extraction.pieces),
        "judge_calls": judge_calls,
        "judge_unreadable": unreadable,
    }
    if options["lost_in_the_middle"]:
        facts["lost_in_the_middle"] = {str(k): v for k, v in lost_in_the_middle(extraction).items()}
    return DocumentResult(scores, rows, by_iteration, _summed(extraction), facts)
