"""MINEA as a Suite: needles infused into FDA documents, schema-guided iterated extraction,
six matching criteria and the summary-quality scores (MINEA, NeurIPS 2024 submission,
Sections 4-5)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from suites.item import Item
from suites.protocol import ItemResult, Models, OptionAdder, Suite, lazy

__all__ = ["MineaOptions", "SUITE"]


@dataclass(frozen=True)
class MineaOptions:
    """``--suite-option minea.KEY=VALUE``.

    Attributes:
        needles: needle-set JSONL (``extractbench needles``); None: the template set of ``seed``.
        schema: schema JSON; None: ``suites/minea/schema.json``.
        seed: the seed of the template needles, their placement and the decoys.
        per_type: template needles per schema type (53 documents take about 670).
        min_share: smallest needle share of an enriched text (paper: 10-30%).
        max_share: largest needle share.
        iterations: further calls per piece after the first (paper Section 5.1: 3).
        piece_chars: piece size in characters.
        max_tokens: generation budget per extraction call.
        context_tokens: the window the extraction thread must fit.
        judge: criterion ``llm`` (and the judge's false-positive rate on decoy needles).
        judge_candidates: extracted entities shown to the judge per needle.
        lost_in_the_middle: re-extract every piece at the end (Section 4.2).
        encoder: semantic similarity: ``minilm`` (the ``minilm`` extra), ``tfidf``, or
            ``auto`` (minilm when installed).
    """

    needles: str | None = None
    schema: str | None = None
    seed: int = 0
    per_type: int = 50
    min_share: float = 0.10
    max_share: float = 0.30
    iterations: int = 3
    piece_chars: int = 4000
    max_tokens: int = 384
    context_tokens: int = 4096
    judge: bool = True
    judge_candidates: int = 10
    lost_in_the_middle: bool = False
    encoder: str = "auto"


@lru_cache(maxsize=4)
def _schema(path: str | None) -> Any:
    from suites.minea.schema import load_schema

    return load_schema(path)


def run(item: Item, models: Models, options: MineaOptions) -> ItemResult:
    """Extract the enriched document and score every criterion (see
    :func:`suites.minea.document.evaluate_document`)."""
    from suites.minea.document import evaluate_document
    from suites.minea.encoder import resolve_encoder

    settings = asdict(options) | {"encoder": resolve_encoder(options.encoder)}
    judge = models.judge if options.judge else None
    result = evaluate_document(item, models.model, judge, _schema(options.schema), settings)
    details = {
        "needles": result.needles,
        "by_iteration": {str(k): v for k, v in result.by_iteration.items()},
        "extraction": result.facts,
    }
    return ItemResult(dict(result.scores), result.generation, details)


def metrics() -> tuple[str, ...]:
    """Every metric name MINEA records."""
    from suites.minea.matching import CRITERIA
    from suites.minea.quality import QUALITY_METRICS

    return (*CRITERIA, *QUALITY_METRICS, "llm_false_positive", "parse_failures", "entities")


def add_options(group: OptionAdder) -> None:
    """MINEA's own pytest option: ``--needles PATH``."""
    group.addoption(
        "--needles",
        metavar="PATH",
        default=None,
        help="MINEA needle set (JSONL, e.g. from `extractbench needles`); same as "
        "--suite-option minea.needles=PATH. Default: the deterministic template set.",
    )


def cli_options(getoption: Callable[[str], Any]) -> dict[str, Any]:
    """``--needles PATH`` as the suite option ``needles`` (an absolute path, so every
    worker reads the same file)."""
    needles = getoption("needles")
    return {"needles": str(Path(needles).resolve())} if needles else {}


def commands(subparsers: argparse._SubParsersAction) -> None:
    """``extractbench needles`` (see :mod:`suites.minea.commands`)."""
    from suites.minea.commands import add_commands

    add_commands(subparsers)


SUITE = Suite(
    name="minea",
    folder=Path(__file__).resolve().parent,
    test="test_minea.py::test_minea",
    load=lazy("suites.minea.items:load_items"),
    run=run,
    options=MineaOptions,
    breakdown=("panel",),
    metrics=metrics,
    data=("minea/haystacks_manifest.jsonl",),
    data_source="SOURCES.md section 4",
    report="suites.minea.report",
    ranges=(  # counts, and relevance's coefficient of variation (std / mean)
        ("parse_failures", 0.0, math.inf),
        ("entities", 0.0, math.inf),
        ("relevance_spread", 0.0, math.inf),
    ),  # fmt: skip
    add_options=add_options,
    cli_options=cli_options,
    commands=commands,
)
