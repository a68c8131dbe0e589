"""One MINEA item end to end: extract the enriched document and, as the control, the same
document without its needles; match its needles against both; score the extraction (the
plain function behind ``test_minea``)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from extractbench.suites.chains import run_chains
from extractbench.suites.item import Item
from extractbench.suites.minea.encoder import load_encoder
from extractbench.suites.minea.extraction import Extraction, extract_document
from extractbench.suites.minea.infusion import Placement, remove_needles
from extractbench.suites.minea.matching import CRITERIA, judge_needle, match_needle
from extractbench.suites.minea.needles import Needle
from extractbench.suites.minea.options import MineaOptions
from extractbench.suites.minea.quality import lost_in_the_middle, quality_scores
from extractbench.suites.minea.schema import Schema
from extractbench.suites.minea.scoring import criteria_table, minea_scores
from extractbench.suites.model import Backend, Generation

__all__ = ["DocumentResult", "evaluate_document", "load_scorers"]

_SCORERS_LOCK = threading.Lock()


@dataclass
class DocumentResult:
    """What one document gives.

    Attributes:
        scores: per-item metrics: the share of the document's needles each criterion hits
            (``n``, ``ns``, ``k0.5``..., ``llm``); with the control, ``control_<criterion>``,
            the share it hits in the needle-free document (its false positives); ``score``
            and ``score_no_llm``, the document's MINEA with and without ``llm``
            (:func:`suites.minea.scoring.minea_scores` over its needles);
            ``llm_false_positive``, the share of decoy needles (never infused into this
            document) the judge calls extracted; the quality scores of the final
            extraction; ``parse_failures`` (calls) and ``entities`` (count).
        needles: per needle ``{"id", "type", "name", "hits": {criterion: 0/1/None},
            "control": {criterion: 0/1/None} or None}``.
        by_iteration: iterations -> quality scores of the entities up to that iteration.
        generation: all calls summed (prediction = the extracted entities as JSON).
        facts: calls, threads, pieces, judge calls, why answers failed to parse
            (``parse_problems``: reason -> calls), lost-in-the-middle redundancy.
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


def _share(values: Iterable[int | None]) -> float | None:
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _hits(
    needle: Needle,
    entities: list[dict[str, Any]],
    judge: Backend | None,
    candidates: int,
    asked: Counter[str],
) -> dict[str, int | None]:
    """Every criterion for one needle against ``entities`` (``llm`` None without a judge);
    judge calls and unreadable answers are counted into ``asked``."""
    hits: dict[str, int | None] = {**match_needle(needle, entities), "llm": None}
    if judge is not None:
        hits["llm"], facts = judge_needle(judge, needle, entities, candidates=candidates)
        asked["calls"] += facts["calls"]
        asked["unreadable"] += hits["llm"] is None
    return hits


def load_scorers(encoder_name: str, wordnet: bool = True) -> None:
    """Load what the quality scores need, once per process: the sentence encoder (with
    ``encoder_name`` ``minilm``) and, with ``wordnet``, WordNet for METEOR (when
    installed). A lock keeps two chains from loading them twice at once."""
    from extractbench.suites.meteor import wordnet_reader

    with _SCORERS_LOCK:
        if encoder_name == "minilm":
            load_encoder()
        if wordnet:
            wordnet_reader()


def evaluate_document(
    item: Item,
    model: Backend,
    judge: Backend | None,
    schema: Schema,
    options: MineaOptions,
    encoder_name: str,
    wordnet: Any = None,
) -> DocumentResult:
    """Extract ``item.prompt`` (the enriched document) and score it.

    Args:
        item: a MINEA item (``meta["needles"]`` holds its needles).
        model: the model under test.
        judge: the judge for criterion ``llm``; None leaves ``llm`` not computed.
        schema: the extraction schema.
        options: the run's MINEA options (:class:`suites.minea.suite.MineaOptions`).
        encoder_name: ``options.encoder`` resolved for this machine: ``minilm`` or
            ``tfidf`` (:func:`suites.minea.encoder.resolve_encoder`).
        wordnet: WordNet for METEOR (tests); default nltk's when installed.

    Raises:
        ModelError: from the backend.
    """
    settings: dict[str, Any] = {
        "piece_chars": options.piece_chars, "iterations": options.iterations,
        "max_tokens": options.max_tokens, "context_tokens": options.context_tokens,
    }  # fmt: skip
    chains: list[Callable[[Backend], Extraction]] = [
        lambda lane: extract_document(
            lane, schema, item.prompt, reextract=options.lost_in_the_middle, **settings
        )
    ]
    if options.control:  # the same calls on the haystack: cached, so once per document
        haystack = remove_needles(
            item.prompt, [Placement(i, 0, start, end) for i, start, end in item.meta["placements"]]
        )

        def control_then_scorers(lane: Backend) -> Extraction:
            # the control is the shorter chain: loading the scorers after it overlaps the
            # end of the enriched extraction when the two run at once
            done = extract_document(lane, schema, haystack, **settings)
            load_scorers(encoder_name, wordnet is None)
            return done

        chains.append(control_then_scorers)
    # the two extractions share nothing: the run's model may decode them at once
    extraction, *rest = run_chains(model, chains)
    control = rest[0] if rest else None
    encoder = load_encoder() if encoder_name == "minilm" else None
    entities = [e for _, _, e in extraction.entities]
    control_entities = [e for _, _, e in control.entities] if control else []
    needles = [Needle.from_json(n, item.id) for n in item.meta["needles"]]
    rows: list[dict[str, Any]] = []
    asked: Counter[str] = Counter()
    for needle in needles:
        hits = _hits(needle, entities, judge, options.judge_candidates, asked)
        against = (
            _hits(needle, control_entities, judge, options.judge_candidates, asked)
            if control
            else None
        )
        rows.append({"id": needle.id, "type": needle.type, "name": needle.name, "hits": hits,
                     "control": against})  # fmt: skip
    scores: dict[str, float | None] = {}
    for criterion in CRITERIA:
        scores[criterion] = _share(r["hits"][criterion] for r in rows)
    for criterion in CRITERIA:
        scores[f"control_{criterion}"] = _share(
            r["control"][criterion] for r in rows if r["control"] is not None
        )
    document = minea_scores(criteria_table(rows), options.max_control_fp)
    scores["score"], scores["score_no_llm"] = document["overall"], document["overall_no_llm"]
    by_iteration = {
        k: quality_scores(item.prompt, extraction, schema, k, wordnet, encoder)
        for k in range(options.iterations + 1)
    }
    scores.update(by_iteration[options.iterations])
    if judge is not None and item.meta.get("decoys"):
        said_yes = []
        for row in item.meta["decoys"]:
            verdict, facts = judge_needle(
                judge, Needle.from_json(row, item.id), entities, options.judge_candidates
            )
            asked["calls"] += facts["calls"]
            if verdict is not None:
                said_yes.append(verdict)
        scores["llm_false_positive"] = sum(said_yes) / len(said_yes) if said_yes else None
    scores["parse_failures"] = float(extraction.parse_failures)
    scores["entities"] = float(len(entities))
    facts = {
        "calls": len(extraction.calls),
        "threads": extraction.threads,
        "pieces": len(extraction.pieces),
        "judge_calls": asked["calls"],
        "judge_unreadable": asked["unreadable"],
        "parse_problems": dict(Counter(c.problem for c in extraction.calls if c.problem)),
        "minea_per_type": document["per_type"],
    }
    if control is not None:
        facts["control"] = {
            "calls": len(control.calls),
            "entities": len(control_entities),
            "parse_failures": control.parse_failures,
        }
    if options.lost_in_the_middle:
        facts["lost_in_the_middle"] = {str(k): v for k, v in lost_in_the_middle(extraction).items()}
    return DocumentResult(scores, rows, by_iteration, _summed(extraction), facts)
