"""FDA key-value extraction (Based / Evaporate): ``{chunk}\\n{key}:``, containment accuracy."""

import pytest

from suites.fda.items import load_items
from suites.fda.metrics import containment


@pytest.mark.suite("fda", load=load_items, breakdown="key")
def test_fda(bench_item, model, score):
    generation = model.generate(
        bench_item.prompt, max_tokens=bench_item.max_tokens, stop=bench_item.stop
    )
    score.generation(generation)
    score("accuracy", containment(generation.text, bench_item.reference))
