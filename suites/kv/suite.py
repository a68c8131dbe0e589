"""Key-value extraction on a user's own documents, as the FDA suite measures it: prompt
``{chunk}\\n{key}:``, 1,920-token chunks, containment accuracy (Arora et al. 2024, Based,
Section 6.2; Evaporate's FDA task), on items read from a JSON Lines file of the user's
(``--suite-option kv.path=FILE``; the format: docs/suites/kv.md)."""

from __future__ import annotations

from pathlib import Path

from extractbench.suites.item import Item
from extractbench.suites.protocol import ItemResult, Models, Suite, generate, lazy
from extractbench.suites.suite_options import UserFileOptions
from pydantic import Field

__all__ = ["KvOptions", "SUITE"]


class KvOptions(UserFileOptions):
    """``--suite-option kv.KEY=VALUE``."""

    path: Path | None = Field(
        default=None,
        description=(
            'the JSON Lines file of items, one {"document": PATH or text, "key": ..., '
            '"value": ... or [...]} per line (a relative path is read from the folder pytest '
            "runs in; a document path from the file's own folder); required"
        ),
    )


def run(item: Item, models: Models, options: KvOptions) -> ItemResult:
    """Generate the value after ``{key}:`` and score containment of any accepted value
    (0 or 1): the FDA suite's metric (:func:`suites.fda.metrics.containment`)."""
    from extractbench.suites.fda.metrics import containment

    generation = generate(item, models.model)
    score = max(containment(generation.text, value) for value in item.meta["values"])
    return ItemResult({"accuracy": score}, generation)


SUITE = Suite(
    name="kv",
    folder=Path(__file__).resolve().parent,
    test="test_kv.py::test_kv",
    load=lazy("extractbench.suites.kv.items:load_items"),
    run=run,
    options=KvOptions,
    breakdown=("key",),
    metrics=("accuracy",),
    data_source="docs/data.md#your-own-data",
    prefetch=True,
    on_request=True,
)
