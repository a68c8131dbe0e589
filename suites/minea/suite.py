"""MINEA as a Suite: needles infused into FDA documents, schema-guided iterated extraction,
six matching criteria and the summary-quality scores (MINEA, NeurIPS 2024 submission,
Sections 4-5)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from extractbench.suites.item import DataError, Item
from extractbench.suites.minea.options import MineaOptions
from extractbench.suites.model import Backend
from extractbench.suites.protocol import ItemResult, Models, OptionAdder, Suite, lazy

__all__ = ["MineaOptions", "SUITE", "judge_for"]


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
    version=1,  # raised by one when a change makes its scores incomparable with earlier runs
    folder=Path(__file__).resolve().parent,
    test="test_minea.py::test_minea",
    load=lazy("extractbench.suites.minea.items:load_items", MineaOptions),
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
