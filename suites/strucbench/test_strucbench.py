"""Struc-Bench: text-to-table in raw text, HTML and LaTeX; H-Score, P-Score, text metrics, errors."""

import pytest

from suites.strucbench.items import load_items
from suites.strucbench.metrics import table_metrics
from suites.strucbench.pscore import JUDGE_GRAMMAR, combine, judge_prompt, parse_judgment

JUDGE_MAX_TOKENS = 256


@pytest.mark.suite("strucbench", load=load_items, breakdown=["format", "source"])
def test_strucbench(bench_item, model, judge, score):
    fmt = bench_item.meta["format"]
    prediction = score.generate(model).text
    scores, counts, parse_error = table_metrics(fmt, prediction, bench_item.reference)
    for name, value in scores.items():
        score(f"{fmt}/{name}", value)
    score.detail("error_counts", counts)
    score.detail("parse_error", parse_error)
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
