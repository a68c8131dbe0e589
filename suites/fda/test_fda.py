"""FDA key-value extraction (Based / Evaporate): ``{chunk}\\n{key}:``, containment accuracy."""

import pytest

from suites.fda.items import load_items
from suites.fda.metrics import containment


@pytest.mark.suite("fda", load=load_items, breakdown="key")
def test_fda(bench_item, model, score):
    generation = score.generate(model)
    score("accuracy", containment(generation.text, bench_item.reference))
