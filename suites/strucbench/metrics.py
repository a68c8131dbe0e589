"""All Struc-Bench metrics of one prediction except the P-Score (which needs the judge)."""

from __future__ import annotations

import typing
from dataclasses import dataclass, field

from extractbench.suites.strucbench.errors import ERROR_TYPES, count_errors
from extractbench.suites.strucbench.hscore import MAXIMA, HScoreMode, hscore
from extractbench.suites.strucbench.hscore_reference import reference_hscore
from extractbench.suites.strucbench.tables import PARSERS, TableParseError
from extractbench.suites.text_metrics import rouge_l

__all__ = ["HSCORE_MODES", "H_NAMES", "TableMetrics", "sacrebleu_score", "table_metrics"]

HSCORE_MODES: tuple[str, ...] = typing.get_args(HScoreMode)
H_NAMES = ("h_content", "h_structure", "h_content_norm", "h_structure_norm")
CORRECTED_SUFFIX = "_corrected"


def _h_scores(fmt: str, content: float, structure: float, suffix: str = "") -> dict[str, float]:
    top_content, top_structure = MAXIMA[fmt]
    values = (content, structure, content / top_content, structure / top_structure)
    return {f"{name}{suffix}": value for name, value in zip(H_NAMES, values, strict=True)}


def sacrebleu_score(prediction: str, reference: str) -> float:
    """Sentence-level SacreBLEU (sacrebleu, default 13a tokenizer), on its 0-100 scale."""
    from sacrebleu.metrics.bleu import BLEU

    return float(BLEU(effective_order=True).sentence_score(prediction, [reference]).score)


@dataclass(frozen=True)
class TableMetrics:
    """Every metric of one prediction except the P-Score.

    Attributes:
        scores: metric name -> value (see :func:`table_metrics`).
        error_counts: Appendix A.2 error type -> count.
        parse_error: why our parser found no table in the prediction, or None.
        hscore_components: the reference H-Score's terms under their own names (empty in
            ``corrected`` mode).
        hscore_unscorable: why the reference could not score the prediction, or None.
    """

    scores: dict[str, float]
    error_counts: dict[str, int]
    parse_error: str | None
    hscore_components: dict[str, float] = field(default_factory=dict)
    hscore_unscorable: str | None = None


def table_metrics(
    fmt: str, prediction: str, reference: str, hscore_mode: str = "reference"
) -> TableMetrics:
    """H-Score (paper scale and normalised), text metrics and error counts.

    Args:
        fmt: ``raw``, ``html`` or ``latex``.
        prediction, reference: the generated and the gold table text.
        hscore_mode: ``reference`` (the Struc-Bench scripts' values, the default),
            ``corrected`` (:data:`suites.strucbench.hscore.CORRECTIONS` applied) or
            ``both``.

    Returns:
        :class:`TableMetrics`. Its ``scores`` keys: ``h_content``, ``h_structure`` (paper
        scale: raw 0-2/0-4, html 0-2/0-3, latex 0-3/0-4), ``h_content_norm``,
        ``h_structure_norm`` (paper scale / maximum; the reference's unclamped Levenshtein
        terms can make them negative) from the reference scorer, the same four with the
        suffix ``_corrected`` from the corrected one (0-1), each per ``hscore_mode``;
        ``sacrebleu`` (0-100), ``rouge_l`` (0-1), ``parse_error`` (1 when the prediction
        holds no table our parser reads), and ``error_<type>`` (1 when the prediction has
        at least one error of that type; Appendix A.2).

    Raises:
        ValueError: unknown format or mode.
    """
    if hscore_mode not in HSCORE_MODES:
        raise ValueError(f"unknown H-Score mode {hscore_mode!r}; one of {', '.join(HSCORE_MODES)}")
    scores: dict[str, float] = {}
    ref = None
    if hscore_mode in ("reference", "both"):
        ref = reference_hscore(fmt, prediction, reference)
        scores |= _h_scores(fmt, ref.content, ref.structure)
    h = hscore(fmt, prediction, reference)
    if hscore_mode in ("corrected", "both"):
        scores |= _h_scores(fmt, h.content, h.structure, CORRECTED_SUFFIX)
    scores |= {
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
    return TableMetrics(
        scores,
        counts,
        h.parse_error,
        ref.components if ref else {},
        ref.unscorable if ref else None,
    )
