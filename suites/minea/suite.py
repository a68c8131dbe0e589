"""MINEA as a Suite: needles infused into FDA documents, schema-guided iterated extraction,
six matching criteria and the summary-quality scores (MINEA, NeurIPS 2024 submission,
Sections 4-5)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from extractbench.suites.item import DataError, Item
from extractbench.suites.model import Backend
from extractbench.suites.protocol import ItemResult, Models, OptionAdder, Suite, lazy
from extractbench.suites.suite_options import UserFileOptions
from pydantic import Field, model_validator

__all__ = ["MineaOptions", "SUITE", "judge_for"]


class MineaOptions(UserFileOptions):
    """``--suite-option minea.KEY=VALUE`` (the paper's settings as defaults)."""

    documents: Path | None = Field(
        None,
        description=(
            "a folder of the user's own documents (*.txt and *.md, UTF-8, its subfolders too) as "
            "the haystacks; unset: the data folder's documents"
        ),
    )
    needles: Path | None = Field(
        None,
        description=("needle-set JSONL (extractbench needles); unset: the template set of seed"),
    )
    schema_file: Path | None = Field(
        None, alias="schema", description=("schema JSON; unset: suites/minea/schema.json")
    )
    seed: int = Field(
        0, description="the seed of the template needles, their placement and the decoys"
    )
    per_type: int = Field(
        50, ge=1, description=("template needles per schema type (53 documents take about 670)")
    )
    min_share: float = Field(
        0.10, gt=0, lt=1, description=("smallest needle share of an enriched text (paper: 10-30%)")
    )
    max_share: float = Field(0.30, gt=0, lt=1, description="largest needle share")
    iterations: int = Field(
        3, ge=0, description=("further calls per piece after the first (paper Section 5.1: 3)")
    )
    piece_chars: int = Field(4000, ge=1, description="piece size in characters")
    max_tokens: int = Field(384, ge=1, description="generation budget per extraction call")
    context_tokens: int = Field(
        4096, ge=1, description=("the window the extraction thread must fit")
    )
    judge: Literal["auto", "self", "off"] = Field(
        "auto",
        description=(
            "criterion llm (and the judge's false-positive rate on decoy needles): auto computes "
            "it only with a judge other than the model under test (--judge-model); self also lets "
            "the model judge its own extraction (the run is then marked self-judged); off never"
        ),
    )
    judge_candidates: int = Field(
        10, ge=1, description=("extracted entities shown to the judge per needle")
    )
    lost_in_the_middle: bool = Field(
        False, description=("re-extract every piece at the end (Section 4.2)")
    )
    encoder: Literal["auto", "minilm", "tfidf"] = Field(
        "auto",
        description=(
            "semantic similarity: minilm (the minilm extra), tfidf, or auto (minilm when installed)"
        ),
    )
    control: bool = Field(
        True,
        description=(
            "also extract every document without its needles (Section 5.2.2); a criterion that "
            "fires there is that criterion's false positive"
        ),
    )
    max_control_fp: float = Field(
        0.05,
        ge=0,
        le=1,
        description=(
            "a criterion whose control false-positive rate for a type is above this is not used "
            "for that type's MINEA"
        ),
    )

    @model_validator(mode="after")
    def _shares_in_order(self) -> MineaOptions:
        if self.min_share > self.max_share:
            raise ValueError(
                f"min_share={self.min_share} > max_share={self.max_share}: "
                "need min_share <= max_share"
            )
        return self

    @property
    def uses_data_dir(self) -> bool:
        """Whether the haystacks come from the data folder (not ``minea.documents``)."""
        return self.documents is None


def judge_for(choice: str, models: Models) -> tuple[Backend | None, str]:
    """The judge of criterion ``llm`` under ``minea.judge=choice`` and how it was chosen:
    ``separate`` (``--judge-model``), ``self`` (the model under test judges itself: the
    fixture passes the model itself as the judge when no ``--judge-model`` is given) or
    ``none`` (criterion ``llm`` not computed)."""
    self_judged = models.judge is models.model
    if choice == "off" or (choice == "auto" and self_judged):
        return None, "none"
    return models.judge, "self" if self_judged else "separate"


@lru_cache(maxsize=4)
def _schema(path: Path | None) -> Any:
    from extractbench.suites.minea.schema import load_schema

    return load_schema(path)


def run(item: Item, models: Models, options: MineaOptions) -> ItemResult:
    """Extract the enriched document (and, with ``control``, the document without its
    needles) and score every criterion (see
    :func:`suites.minea.document.evaluate_document`).

    Raises:
        DataError: the item's needles conflict (shared keywords, a name found elsewhere
            in the document: ``meta["conflicts"]``); the item fails.
        ModelError: from the backend.
    """
    from extractbench.suites.minea.document import evaluate_document
    from extractbench.suites.minea.encoder import resolve_encoder

    conflicts = item.meta.get("conflicts", {})
    if any(conflicts.values()):
        raise DataError(
            f"{item.id}: needles that cannot be told apart: "
            f"{conflicts.get('shared_keyword_pairs', 0)} pair(s) share more than one keyword, "
            f"{conflicts.get('name_collisions', 0)} name(s) occur elsewhere in the document "
            "(a needle set with distinct keywords and new names fixes it)"
        )
    encoder = resolve_encoder(options.encoder)
    judge, how = judge_for(options.judge, models)
    schema = _schema(options.schema_file)
    result = evaluate_document(item, models.model, judge, schema, options, encoder)
    details = {
        "needles": result.needles,
        "by_iteration": {str(k): v for k, v in result.by_iteration.items()},
        "extraction": result.facts,
        "judge": how,
        "self_judged": how == "self",
        "control": options.control,
    }
    return ItemResult(dict(result.scores), result.generation, details)


def metrics() -> tuple[str, ...]:
    """Every metric name MINEA records."""
    from extractbench.suites.minea.matching import CRITERIA
    from extractbench.suites.minea.quality import QUALITY_METRICS

    return (
        "score", "score_no_llm", *CRITERIA, *(f"control_{c}" for c in CRITERIA),
        *QUALITY_METRICS, "llm_false_positive", "parse_failures", "entities",
    )  # fmt: skip


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
    from extractbench.suites.minea.commands import add_commands

    add_commands(subparsers)


SUITE = Suite(
    name="minea",
    folder=Path(__file__).resolve().parent,
    test="test_minea.py::test_minea",
    load=lazy("extractbench.suites.minea.items:load_items"),
    run=run,
    options=MineaOptions,
    breakdown=("panel",),
    metrics=metrics,
    data=("minea/haystacks_manifest.jsonl",),
    data_source="docs/data.md#minea",
    report="extractbench.suites.minea.report",
    ranges=(  # counts, and relevance's coefficient of variation (std / mean)
        ("parse_failures", 0.0, math.inf),
        ("entities", 0.0, math.inf),
        ("relevance_spread", 0.0, math.inf),
    ),  # fmt: skip
    judged=("score", "llm", "control_llm", "llm_false_positive"),
    add_options=add_options,
    cli_options=cli_options,
    commands=commands,
)
