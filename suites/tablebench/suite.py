"""TableBench as a Suite: its test questions with its own DP prompts, scored per question
type as TableBench scores them (Wu et al. 2025, Section 4)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from extractbench.suites.item import Item
from extractbench.suites.protocol import ItemResult, Models, Suite, generate, lazy
from extractbench.suites.suite_options import SuiteOptions

__all__ = ["TableBenchOptions", "SUITE"]


class TableBenchOptions(SuiteOptions):
    """``--suite-option tablebench.KEY=VALUE``."""

    answer_cue: str = Field(
        default="Final Answer:",
        description=(
            "TableBench's DP prompt ends with the question; base models are cued to answer in its "
            '"Final Answer: ..." form; "" gives the official prompt exactly'
        ),
    )
    source: Literal["local", "hub"] = Field(
        default="local",
        description=(
            "local: the data dir's copy; hub: the cleaned release through the datasets library "
            "(the hub extra)"
        ),
    )
    dataset: str = Field(
        default="Multilingual-Multimodal-NLP/TableBench", description=("hub: a hub id or a local folder")
    )
    split: str = Field(default="test", description="hub: the split to read")

    @property
    def uses_data_dir(self) -> bool:
        """Whether the items come from the data folder (``source`` is ``local``)."""
        return self.source == "local"


def run_tablebench(item: Item, models: Models, options: TableBenchOptions) -> ItemResult:
    """Generate; the text after the last ``Final Answer:`` is scored with ROUGE-L for
    DataAnalysis questions and normalised exact match otherwise (TableBench, Section 4)."""
    from extractbench.suites.tablebench.dp import final_answer
    from extractbench.suites.tableqa.metrics import exact_match_normalized
    from extractbench.suites.text_metrics import rouge_l

    generation = generate(item, models.model)
    answer = final_answer(generation.text)
    if item.meta["qtype"] == "DataAnalysis":
        return ItemResult({"rouge_l": rouge_l(answer, item.reference)}, generation)
    return ItemResult({"exact_match": exact_match_normalized(answer, item.reference)}, generation)


_FOLDER = Path(__file__).resolve().parent

SUITE = Suite(
    name="tablebench",
    version=1,  # raised by one when a change makes its scores incomparable with earlier runs
    folder=_FOLDER,
    test="test_tablebench.py::test_tablebench",
    load=lazy("extractbench.suites.tablebench.items:load_tablebench", TableBenchOptions),
    run=run_tablebench,
    options=TableBenchOptions,
    breakdown=("qtype", "qsubtype"),
    metrics=("exact_match", "rouge_l"),
    data=(
        "tableqa/tablebench/TableBench_test_886.jsonl",
        "tableqa/tablebench/TableBench_DP_official_example_54.jsonl",
    ),
    data_source="docs/data.md#tablebench",
    prefetch=True,
)
