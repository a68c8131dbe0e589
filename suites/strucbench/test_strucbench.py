"""Struc-Bench (text-to-table in raw text, HTML and LaTeX): one test per item; the suite is
``suites/strucbench/suite.py`` (items, options, how an item is run and scored)."""

from plugins.run.suite_test import suite_test

test_strucbench = suite_test("strucbench")
