"""FDA key-value extraction (Based / Evaporate) as a Suite: prompt ``{chunk}\\n{key}:``,
containment accuracy (Arora et al. 2024, Based, Section 6.2; Evaporate's FDA task)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from extractbench.suites.item import Item
from extractbench.suites.protocol import ItemResult, Models, Suite, generate, lazy
from extractbench.suites.suite_options import SuiteOptions

__all__ = ["FdaOptions", "SUITE"]


class FdaOptions(SuiteOptions):
    """``--suite-option fda.KEY=VALUE``."""

    source: Literal["local", "based-fda"] = Field(
        default="local",
        description=(
            "local: the silver labels of the data dir; based-fda: the paper's own data through "
            "the datasets library (the hub extra)"
        ),
    )
    dataset: str = Field(
        default="hazyresearch/based-fda",
        description=("based-fda: a hub id or a local folder in its schema"),
    )
    split: str = Field(default="validation", description="based-fda: the split to read")

    @property
    def uses_data_dir(self) -> bool:
        """Whether the items come from the data folder (``source`` is ``local``)."""
        return self.source == "local"


def run(item: Item, models: Models, options: FdaOptions) -> ItemResult:
    """Generate the value after ``{key}:`` and score containment (0 or 1)."""
    from extractbench.suites.fda.metrics import containment

    generation = generate(item, models.model)
    return ItemResult({"accuracy": containment(generation.text, item.reference)}, generation)


SUITE = Suite(
    name="fda",
    version=1,  # raised by one when a change makes its scores incomparable with earlier runs
    folder=Path(__file__).resolve().parent,
    test="test_fda.py::test_fda",
    load=lazy("extractbench.suites.fda.items:load_items", FdaOptions),
    run=run,
    options=FdaOptions,
    breakdown=("key",),
    metrics=("accuracy",),
    data=("fda/fda_kv_labels_derived.jsonl",),
    data_source="docs/data.md#fda",
    prefetch=True,
)
