"""FDA key-value extraction (Based / Evaporate): one test per item (the extractbench plugin parametrizes
``bench_item`` with the suite's items; ``run_item`` runs one and records its scores); the suite is
``suites/fda/suite.py`` (items, options, how an item is run and scored)."""

import pytest


@pytest.mark.suite("fda")
def test_fda(bench_item, run_item):
    run_item(bench_item)
