"""Struc-Bench: text-to-table in raw text, HTML and LaTeX; H-Score, P-Score, text metrics, errors."""

import pytest

from suites.strucbench.bertscore import bertscore_available, bertscore_f1
from suites.strucbench.items import load_items
from suites.strucbench.metrics import table_metrics
from suites.strucbench.pscore import JUDGE_GRAMMAR, combine, judge_prompt, parse_judgment

JUDGE_MAX_TOKENS = 256


@pytest.mark.suite("strucbench", load=load_items, breakdown=["format", "source"])
def test_strucbench(bench_item, model, judge, score):
    fmt = bench_item.meta["format"]
    prediction = score.generate(model).text
    metrics = table_metrics(fmt, prediction, bench_item.reference, bench_item.meta["hscore"])
    for name, value in metrics.scores.items():
        score(f"{fmt}/{name}", value)
    if bertscore_available():
        score(f"{fmt}/bertscore", bertscore_f1(prediction, bench_item.reference))
    score.detail("error_counts", metrics.error_counts)
    score.detail("parse_error", metrics.parse_error)
    if metrics.hscore_components:
        score.detail("hscore_components", metrics.hscore_components)
    if metrics.hscore_unscorable:
        score.detail("hscore_unscorable", metrics.hscore_unscorable)
    if bench_item.meta["pscore"]:
        judgments = [
            parse_judgment(
                judge.generate(
                    judge_prompt(a, b), max_tokens=JUDGE_MAX_TOKENS, grammar=JUDGE_GRAMMAR
                ).text
            )
            for a, b in ((prediction, bench_item.reference), (bench_item.reference, prediction))
        ]
        p = combine(*judgments)
        score(f"{fmt}/p_content", p.content)
        score(f"{fmt}/p_structure", p.structure)
        score("pscore_parse_failures", float(p.failures))
