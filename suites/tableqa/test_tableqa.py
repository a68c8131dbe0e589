"""Table QA (lookup questions over wiki and synthetic tables) and TableBench alongside: one
test per item; the suites are ``suites/tableqa/suite.py``."""

from plugins.run.suite_test import suite_test

test_tableqa = suite_test("tableqa")
test_tablebench = suite_test("tablebench")
