"""Key-value extraction on a user's own documents, as the FDA suite measures it by default:
prompt ``{chunk}\\n{key}:``, 1,920-token chunks, containment accuracy (Arora et al. 2024,
Based, Section 6.2; Evaporate's FDA task), on items read from a JSON Lines file of the
user's (``--suite-option kv.path=FILE``; the format: docs/suites/kv.md).

A team measures its model as it ships it through named options: its prompt template and
system text, budget, whole documents, a metric per key (:mod:`suites.kv.metrics`), or the
whole record as one JSON object under a JSON Schema (``kv.schema``: :mod:`suites.kv.schema`).
"""

from __future__ import annotations

from pathlib import Path

from extractbench.suites.item import Item, SuiteData
from extractbench.suites.kv.options import KvOptions
from extractbench.suites.protocol import ItemResult, Models, Suite, generate

__all__ = ["KvOptions", "SUITE", "load", "run"]


def load(data_dir: Path | None, options: KvOptions) -> SuiteData:
    """The items of ``kv.path``: key mode's (:func:`suites.kv.items.load_items`), or with
    ``kv.schema`` the schema mode's (:func:`suites.kv.schema.load_objects`).

    Raises:
        DataError: see those functions.
    """
    if options.schema_file is not None:
        from extractbench.suites.kv.schema import load_objects

        return load_objects(data_dir, options)
    from extractbench.suites.kv.items import load_items

    return load_items(data_dir, options)


def run(item: Item, models: Models, options: KvOptions) -> ItemResult:
    """Key mode: generate the answer to the item's prompt and score it against every
    accepted value with the key's metric (0 or 1; :func:`suites.kv.metrics.score`; the
    default ``contains`` is the FDA suite's :func:`suites.fda.metrics.containment`). Schema
    mode (``kv.schema``): :func:`suites.kv.schema.run_document`.

    Raises:
        ModelError: from the backend.
    """
    if options.schema_file is not None:
        from extractbench.suites.kv.schema import run_document

        return run_document(item, models.model, options)
    from extractbench.suites.kv.metrics import score

    generation = generate(item, models.model)
    metric = options.metric_for(item.meta["key"])
    value = score(generation.text, item.meta["values"], metric, options.metric_settings())
    return ItemResult({"accuracy": value}, generation, {"metric": metric})


SUITE = Suite(
    name="kv",
    version=1,  # raised by one when a change makes its scores incomparable with earlier runs
    folder=Path(__file__).resolve().parent,
    test="test_kv.py::test_kv",
    load=load,
    run=run,
    options=KvOptions,
    breakdown=("key",),
    metrics=("accuracy", "field_accuracy", "json_valid", "schema_valid", "field/*"),
    data_source="docs/data.md#your-own-data",
    prefetch=True,
    on_request=True,
)
