"""Table QA (lookup questions over wiki and synthetic tables): one test per item; the suite is
``suites/tableqa/suite.py``."""

import pytest


@pytest.mark.suite("tableqa")
def test_tableqa(bench_item, run_item):
    run_item(bench_item)
