"""Key-value extraction on the user's own documents: one test per item (the extractbench
plugin parametrizes ``bench_item`` with the items of ``kv.path``); the suite is
``suites/kv/suite.py``."""

import pytest


@pytest.mark.suite("kv")
def test_kv(bench_item, run_item):
    run_item(bench_item)
