"""Table QA: 'what is t if q is X' over wiki and synthetic tables; TableBench alongside."""

import pytest

from suites.tableqa.items import load_items, load_tablebench
from suites.tableqa.metrics import contains, exact_match, exact_match_normalized
from suites.tableqa.tablebench import final_answer
from suites.text_metrics import rouge_l


@pytest.mark.suite(
    "tableqa",
    load=load_items,
    breakdown=["subset", "width", "row", "distance"],
    report="suites.tableqa.report",
)
def test_tableqa(bench_item, model, score):
    generation = score.generate(model)
    score("exact_match", exact_match(generation.text, bench_item.reference))
    score("exact_match_normalized", exact_match_normalized(generation.text, bench_item.reference))
    score("contains", contains(generation.text, bench_item.reference))


@pytest.mark.suite("tablebench", load=load_tablebench, breakdown=["qtype", "qsubtype"])
def test_tablebench(bench_item, model, score):
    answer = final_answer(score.generate(model).text)
    if bench_item.meta["qtype"] == "DataAnalysis":
        score("rouge_l", rouge_l(answer, bench_item.reference))
    else:
        score("exact_match", exact_match_normalized(answer, bench_item.reference))
