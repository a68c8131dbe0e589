"""MINEA's calls on one piece share its text as their prompt's prefix, which llama.cpp in
process takes from its KV cache: the answers must be those of every call prefilled alone;
and a document's two extractions, decoded at once on two contexts, must answer as they do
one after the other."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from extractbench.fixtures.models.routing import ROUTE
from extractbench.suites.minea.extraction import extract_document
from extractbench.suites.minea.schema import load_schema
from extractbench.suites.model import Generation
from extractbench.suites.model_files import default_model_path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


class Recorded:
    """The backend, recording each call's prompt, answer and prompt tokens taken from the
    KV cache; with ``alone``, each call in a group of its own, so llama.cpp forgets its KV
    cache before every call and prefills every prompt whole (no prefix reused)."""

    def __init__(self, inner, alone: bool) -> None:  # noqa: ANN001
        self.inner, self.info, self.capabilities = inner, inner.info, inner.capabilities
        self.alone, self.calls = alone, []
        self._groups = itertools.count()

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def generate(self, prompt: str, **kwargs) -> Generation:  # noqa: ANN003
        token = ROUTE.set(f"alone-{next(self._groups)}") if self.alone else None
        try:
            out = self.inner.generate(prompt, **kwargs)
        finally:
            if token is not None:
                ROUTE.reset(token)
        self.calls.append((prompt, out.text, out.reused_prompt_tokens))
        return out


@pytest.mark.skipif(
    not (DATA / "minea" / "haystacks_manifest.jsonl").is_file(), reason="no ../shared/data/minea"
)
def test_minea_answers_are_the_same_with_the_shared_prefix_reused_or_not():
    """A piece of the first MINEA document with its needles (2,000 characters, where the
    default model finds entities), extracted with two further calls: its calls with the
    piece's prefix taken from the KV cache give the answers of the same calls prefilled
    whole, among them entities (not only empty lists)."""
    from extractbench.fixtures.models.llama_cpp.backend import LlamaCppBackend
    from extractbench.suites.registry import Registry

    suite = Registry.installed().suites["minea"]
    document = suite.load(DATA, suite.parse_options(None)).items[0].prompt[4000:6000]
    backend = LlamaCppBackend(default_model_path(), n_ctx=4096, n_threads=1)
    options = {"piece_chars": 2000, "iterations": 2, "max_tokens": 128, "context_tokens": 4096}
    reused, alone = Recorded(backend, alone=False), Recorded(backend, alone=True)
    token = ROUTE.set("one-document")  # an item's calls: one group, the prefix kept
    try:
        kept = extract_document(reused, load_schema(), document, **options)
    finally:
        ROUTE.reset(token)
    fresh = extract_document(alone, load_schema(), document, **options)
    assert len(reused.calls) == len(alone.calls) == 3
    assert [c[:2] for c in reused.calls] == [c[:2] for c in alone.calls]  # prompts, answers
    assert kept.entities == fresh.entities and kept.entities
    # every call after the first took a prefix from the cache; alone, none did
    assert all(c[2] > 0 for c in reused.calls[1:])
    assert all(c[2] == 0 for c in alone.calls)


@pytest.mark.skipif(
    not (DATA / "minea" / "haystacks_manifest.jsonl").is_file(), reason="no ../shared/data/minea"
)
def test_minea_answers_are_the_same_with_the_extractions_at_once_or_one_after_the_other(
    monkeypatch,
):
    """Two pieces of the first MINEA document extracted as the run extracts a document and
    its control: at once on two lanes (a context each, one thread each) and one after the
    other on one context: the same prompts, answers and entities. Two threads at most, as
    any other test of the default model: more would share this test's cores with the
    xdist neighbour's llama.cpp threads, whose spinning waits then slow both many times."""
    from extractbench.fixtures.models import ModelSpec, caching_backend, core_share
    from extractbench.fixtures.models.call_log import recording_calls
    from extractbench.fixtures.models.routing import routing
    from extractbench.suites.chains import run_chains
    from extractbench.suites.registry import Registry

    monkeypatch.setattr(core_share, "_share", None)  # not a share: the fixed two threads
    suite = Registry.installed().suites["minea"]
    item = suite.load(DATA, suite.parse_options(None)).items[0]
    pieces = [item.prompt[4000:5500], item.prompt[6000:7500]]
    options = {"piece_chars": 1500, "iterations": 1, "max_tokens": 96, "context_tokens": 4096}
    chains = [
        lambda lane, text=text: extract_document(lane, load_schema(), text, **options)
        for text in pieces
    ]
    spec = ModelSpec("llama-cpp", default_model_path(), 0, 1, default=True)
    results, logs = [], []
    for at_once in (True, False):
        model = caching_backend(spec, [item], None)
        if at_once:  # two lanes of one thread each (the kind gives a 1-thread process one)
            model.lanes.count = lambda: 2
        else:
            model.lanes = None
        log: list[dict] = []
        with routing(item.group), recording_calls(log):
            results.append(run_chains(model, chains))
        logs.append(log)
    assert {c.get("lanes") for c in logs[0]} == {2} and "lanes" not in logs[1][0]
    assert [(c["key"], c["text"]) for c in logs[0]] == [(c["key"], c["text"]) for c in logs[1]]
    assert [r.entities for r in results[0]] == [r.entities for r in results[1]]
    assert any(r.entities for r in results[0])  # entities, not only empty lists
