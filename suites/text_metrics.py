"""Text-similarity metrics more than one suite reports (Struc-Bench, TableBench)."""

from __future__ import annotations

__all__ = ["rouge_l"]


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F-measure (Lin 2004) of ``prediction`` against ``reference``, in [0, 1]:
    rouge-score's ``RougeScorer(["rougeL"])`` with its default tokenizer, no stemming.
    Struc-Bench (Tang et al. 2023, Table 2) and TableBench (Wu et al. 2025, section 4) both
    report it."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    return float(scorer.score(reference, prediction)["rougeL"].fmeasure)
