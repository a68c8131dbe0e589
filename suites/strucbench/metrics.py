"""All Struc-Bench metrics of one prediction except the P-Score (which needs the judge)."""

from __future__ import annotations

from suites.strucbench.errors import ERROR_TYPES, count_errors
from suites.strucbench.hscore import hscore
from suites.strucbench.tables import PARSERS, TableParseError

__all__ = ["sacrebleu_score", "rouge_l", "table_metrics"]


def sacrebleu_score(prediction: str, reference: str) -> float:
    """Sentence-level SacreBLEU (sacrebleu, default 13a tokenizer), on its 0-100 scale."""
    from sacrebleu.metrics import BLEU

    return float(BLEU(effective_order=True).sentence_score(prediction, [reference]).score)


def rouge_l(prediction: str, reference: str) -> float:
    """ROUGE-L F-measure (rouge-score, no stemming), 0-1."""
    from rouge_score import rouge_scorer

    return float(
        rouge_scorer.RougeScorer(["rougeL"]).score(reference, prediction)["rougeL"].fmeasure
    )


def table_metrics(
    fmt: str, prediction: str, reference: str
) -> tuple[dict[str, float], dict[str, int], str | None]:
    """H-Score (paper scale and normalised), text metrics and error counts.

    Returns:
        (scores, error_counts, parse_error). ``scores`` keys: ``h_content``,
        ``h_structure`` (paper scale: raw 0-2/0-4, html 0-2/0-3, latex 0-3/0-4),
        ``h_content_norm``, ``h_structure_norm`` (0-1), ``sacrebleu`` (0-100),
        ``rouge_l`` (0-1), ``parse_error`` (1 when the prediction holds no parsable
        table), and ``error_<type>`` (1 when the prediction has at least one error of
        that type; Appendix A.2). ``error_counts`` has the counts per type.
    """
    h = hscore(fmt, prediction, reference)
    scores = {
        "h_content": h.content,
        "h_structure": h.structure,
        "h_content_norm": h.content_norm,
        "h_structure_norm": h.structure_norm,
        "sacrebleu": sacrebleu_score(prediction, reference),
        "rouge_l": rouge_l(prediction, reference),
        "parse_error": float(h.parse_error is not None),
    }
    counts = dict.fromkeys(ERROR_TYPES, 0)
    if h.parse_error is None:
        try:
            counts = count_errors(PARSERS[fmt](prediction), PARSERS[fmt](reference))
        except TableParseError:
            pass
    for kind in ERROR_TYPES:
        scores[f"error_{kind}"] = float(counts[kind] > 0)
    return scores, counts, h.parse_error
