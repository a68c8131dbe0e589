"""MINEA: needles infused into FDA documents, schema-guided iterated extraction, six
matching criteria and the summary-quality scores."""

from functools import lru_cache

import pytest

from suites.minea.document import evaluate_document
from suites.minea.items import load_items
from suites.minea.schema import load_schema

schema = lru_cache(maxsize=4)(load_schema)


@pytest.mark.suite("minea", load=load_items, breakdown=["panel"], report="suites.minea.report")
def test_minea(bench_item, model, judge, score):
    options = bench_item.meta["extraction"]
    result = evaluate_document(
        bench_item, model, judge if options["judge"] else None, schema(options["schema"]), options
    )
    score.record_generation(result.generation)
    for name, value in result.scores.items():
        score(name, value)
    score.detail("needles", result.needles)
    score.detail("by_iteration", {str(k): v for k, v in result.by_iteration.items()})
    score.detail("extraction", result.facts)
