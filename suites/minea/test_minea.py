"""MINEA (needles infused into FDA documents, iterated extraction, six matching criteria):
one test per document; the suite is ``suites/minea/suite.py``."""

from plugins.run.suite_test import suite_test

test_minea = suite_test("minea")
