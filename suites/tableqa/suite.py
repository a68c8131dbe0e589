"""Table QA as a Suite: the article's lookup questions ("what is t if q is X" over one table;
wiki and synthetic syn1-syn5; IDP team's Table-QA article, Sections 2-3)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from extractbench.suites.item import Item
from extractbench.suites.protocol import ItemResult, Models, Suite, generate, lazy
from extractbench.suites.suite_options import UserFileOptions

__all__ = ["TableQAOptions", "TABLEQA"]


class TableQAOptions(UserFileOptions):
    """``--suite-option tableqa.KEY=VALUE``."""

    language: Literal["en", "ru"] = Field(
        default="en", description=("en: the translated system prompt and template; ru: the article's own")
    )
    per_cell: int = Field(default=10, ge=1, description="questions per (W, r) heatmap cell (article: 10)")
    seed: int = Field(default=0, description="the seed of the question sample and the synthetic tables")
    answer_cue: str = Field(
        default="\nAnswer:",
        description=(
            "follows the question for completion (base) models; the article used chat models "
            'and no cue, so "" gives its prompt exactly'
        ),
    )
    match: Literal["strict", "normalized"] = Field(
        default="strict",
        description=(
            "the metric of the results table and heatmaps: strict (the article's exact match) or "
            "normalized"
        ),
    )
    tables: Path | None = Field(
        default=None,
        description=(
            "a folder of the user's own tables (.csv, .html): the questions are drawn from them "
            "(subset user) instead of wiki and syn1-syn5"
        ),
    )

    @property
    def uses_data_dir(self) -> bool:
        """Whether the tables come from the data folder (not ``tableqa.tables``)."""
        return self.tables is None


def run_tableqa(item: Item, models: Models, options: TableQAOptions) -> ItemResult:
    """Generate the answer; exact match (strict and normalised) and containment, 0 or 1."""
    from extractbench.suites.tableqa.metrics import contains, exact_match, exact_match_normalized

    generation = generate(item, models.model)
    text, reference = generation.text, item.reference
    scores: dict[str, float | None] = {
        "exact_match": exact_match(text, reference),
        "exact_match_normalized": exact_match_normalized(text, reference),
        "contains": contains(text, reference),
    }
    return ItemResult(scores, generation)


_FOLDER = Path(__file__).resolve().parent

TABLEQA = Suite(
    name="tableqa",
    version=1,  # raised by one when a change makes its scores incomparable with earlier runs
    folder=_FOLDER,
    test="test_tableqa.py::test_tableqa",
    load=lazy("extractbench.suites.tableqa.items:load_items", TableQAOptions),
    run=run_tableqa,
    options=TableQAOptions,
    breakdown=("subset", "width", "row", "distance"),
    metrics=("exact_match", "exact_match_normalized", "contains"),
    data=("tableqa/wtq/csv/*/*.html",),
    data_source="docs/data.md#tableqa",
    report="extractbench.suites.tableqa.report",
    prefetch=True,
)
