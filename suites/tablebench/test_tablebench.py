"""TableBench: one test per item; the suite is ``suites/tablebench/suite.py``."""

import pytest


@pytest.mark.suite("tablebench")
def test_tablebench(bench_item, run_item):
    run_item(bench_item)
