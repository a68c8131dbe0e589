"""Struc-Bench (text-to-table in raw text, HTML and LaTeX): one test per item (the extractbench plugin parametrizes
``bench_item`` with the suite's items; ``run_item`` runs one and records its scores); the suite is
``suites/strucbench/suite.py`` (items, options, how an item is run and scored)."""

import pytest


@pytest.mark.suite("strucbench")
def test_strucbench(bench_item, run_item):
    run_item(bench_item)
