"""FDA key-value extraction (Based / Evaporate): one test per item; the suite is
``suites/fda/suite.py`` (items, options, how an item is run and scored)."""

from plugins.run.suite_test import suite_test

test_fda = suite_test("fda")
