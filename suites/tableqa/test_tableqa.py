"""Table QA (lookup questions over wiki and synthetic tables) and TableBench alongside: one
test per item; the suites are ``suites/tableqa/suite.py``."""

import pytest


@pytest.mark.suite("tableqa")
def test_tableqa(bench_item, run_item):
    run_item(bench_item)


@pytest.mark.suite("tablebench")
def test_tablebench(bench_item, run_item):
    run_item(bench_item)
