"""MINEA (needles infused into FDA documents, iterated extraction, six matching criteria):
one test per document; the suite is ``suites/minea/suite.py``."""

from plugins.suite_test import suite_test

test_minea = suite_test("minea")
