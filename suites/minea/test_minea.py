"""MINEA (needles infused into FDA documents, iterated extraction, six matching criteria):
one test per document; the suite is ``suites/minea/suite.py``."""

import pytest


@pytest.mark.suite("minea")
def test_minea(bench_item, run_item):
    run_item(bench_item)
