"""Table QA, faithful round 3: the article's own per-model figures, stored and set beside a
run with each average's definition."""

from __future__ import annotations

import pytest

from extractbench.suites.tableqa import article
from extractbench.suites.tableqa.report import article_comparison, results_table, summary_lines


def test_the_stored_figures_reproduce_the_articles_printed_averages():
    assert len(article.RESULTS) == 8 and article.SUBSETS[1] == "gosts"
    for model, (values, printed) in article.RESULTS.items():
        assert len(values) == 7
        assert round(article.average(article.per_subset(model)), 1) == printed, model
    assert article.per_subset("Llama-3.1-405B")["syn3"] == 54
    assert article.average_without_gost("Gemma-2-27B") == pytest.approx((409 - 67) / 6)
    with pytest.raises(KeyError):
        article.per_subset("Gemma-3-270M")  # the article does not report our default model


def _items(pct: dict[str, float], n: int = 10) -> list[dict]:
    return [
        {"suite": "tableqa", "meta": {"subset": subset, "width": 2, "row": 1, "distance": 1},
         "scores": {"exact_match": float(i < round(share * n / 100))}}
        for subset, share in pct.items() for i in range(n)
    ]  # fmt: skip


def test_the_comparison_averages_the_article_over_the_subsets_the_run_has():
    table = results_table(_items({"wiki": 50, "syn1": 100, "syn2": 0}))
    assert table["average_pct"] == pytest.approx(50.0)
    rows = {r["model"]: r for r in article_comparison(table, "tiny.gguf")["rows"]}
    assert rows["tiny.gguf"]["avg_without_gost"] == pytest.approx(50.0)
    assert rows["tiny.gguf"]["avg_article"] is None and rows["tiny.gguf"]["source"] == "this run"
    gemma = rows["Gemma-2-27B"]
    assert gemma["avg_article"] == 58.4
    assert gemma["avg_without_gost"] == pytest.approx((63 + 79 + 51) / 3)  # wiki, syn1, syn2
    full = results_table(
        _items(dict.fromkeys(("wiki", "syn1", "syn2", "syn3", "syn4", "syn5"), 10))
    )
    rows = {r["model"]: r for r in article_comparison(full, "tiny.gguf")["rows"]}
    assert rows["Qwen-2.5-32B"]["avg_without_gost"] == pytest.approx(
        article.average_without_gost("Qwen-2.5-32B")
    )


def test_the_terminal_names_the_average_and_the_articles_figures():
    record = {"items": _items({"wiki": 20, "syn4": 40}), "suites": {}}
    lines = summary_lines(record, "tableqa")
    assert "unweighted mean over the 2 subsets shown, not the article's 7-subset Avg" in lines[0]
    assert "30.0" in lines[2]
    assert "Llama-3.1-405B 90.5" in lines[4]  # (82 + 99) / 2 over wiki and syn4
