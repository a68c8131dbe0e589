"""Group prefetch without pytest's plugin: a group's uncached calls generated in one
batch, each cached alone, each item's own call served from what was held."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from extractbench.fixtures.models.cache import GenerationCache
from extractbench.fixtures.models.fake.backend import FakeBackend
from extractbench.fixtures.models.prefetch import prefetch_group, requests_of
from extractbench.fixtures.models.wrappers import CachingBackend, recording_calls
from extractbench.suites.item import Item
from extractbench.suites.model import Capabilities, Generation, ModelError, ModelInfo, Request


class Batching(FakeBackend):
    """The fake model, with a batch call that records what it was asked."""

    def __init__(self, batching: bool = True, fail: bool = False) -> None:
        super().__init__()
        self.capabilities = Capabilities(batching=batching)
        self.batches: list[list[str]] = []
        self.single: list[str] = []
        self.fail = fail

    def generate(self, prompt: str, **kwargs) -> Generation:  # noqa: ANN003
        self.single.append(prompt)
        return super().generate(prompt, **kwargs)

    def generate_batch(self, requests: Sequence[Request]) -> list[Generation]:
        if self.fail:
            raise ModelError("prompt of 9000 tokens + 48 exceeds 8192")
        self.batches.append([r.prompt for r in requests])
        out = [
            FakeBackend.generate(self, r.prompt, max_tokens=r.max_tokens, stop=r.stop)
            for r in requests
        ]
        return [Generation(g.text, g.prompt_tokens, g.completion_tokens, 0.5, batch_size=len(requests)) for g in out]  # fmt: skip


def group(n: int = 4) -> list[Item]:
    chunk = "applicant: Acme\ndevice: Pump\nclass: II\nnumber: K1\n"
    keys = ["applicant", "device", "class", "number"][:n]
    return [Item(f"fda/d/c0/{k}", "fda/d/c0", chunk, f"{k}:", "x", max_tokens=8, stop=("\n",)) for k in keys]  # fmt: skip


def wrap(inner: Batching, cache: GenerationCache | None) -> CachingBackend:
    info = ModelInfo("fake", "fake", "", "")
    return CachingBackend(info, "fake:seed=0", lambda: inner, cache, capabilities=lambda: inner.capabilities)  # fmt: skip


def ask(backend: CachingBackend, item: Item) -> tuple[Generation, list[dict]]:
    with recording_calls([]) as calls:
        generation = backend.generate(item.prompt, max_tokens=item.max_tokens, stop=item.stop)
    return generation, calls


def test_uncached_items_of_a_group_go_in_one_batch_and_each_item_reads_its_own(tmp_path):
    inner, items = Batching(), group()
    backend = wrap(inner, GenerationCache(tmp_path))
    report = prefetch_group(backend, requests_of(items))
    assert (report.generated, report.cached, report.batch_sizes) == (4, 0, [4] * 4)
    assert inner.batches == [[it.prompt for it in items]]
    for item in items:
        generation, calls = ask(backend, item)
        alone = FakeBackend().generate(item.prompt, max_tokens=8, stop=("\n",))
        assert generation.text == alone.text and not generation.cached
        assert calls[0]["batch_size"] == 4 and calls[0]["latency_s"] == 0.5  # its share
    assert inner.single == []  # nothing generated twice


def test_resume_generates_only_what_the_cache_lacks_and_each_key_is_the_items_own(tmp_path):
    items = group()
    first = wrap(Batching(), GenerationCache(tmp_path))
    for item in items[:2]:  # a run stopped after two items: they generated alone
        ask(first, item)
    inner = Batching()
    resumed = wrap(inner, GenerationCache(tmp_path))
    report = prefetch_group(resumed, requests_of(items))
    assert (report.cached, report.generated) == (2, 2)
    assert inner.batches == [[it.prompt for it in items[2:]]]
    answers = [ask(resumed, it)[0] for it in items]
    assert [g.cached for g in answers] == [True, True, False, False]
    # a third run finds every item cached under the key of its request alone
    again = Batching()
    third = wrap(again, GenerationCache(tmp_path))
    assert prefetch_group(third, requests_of(items)).generated == 0
    assert [ask(third, it)[0].text for it in items] == [g.text for g in answers]
    assert again.batches == [] and again.single == []


def test_a_backend_that_does_not_batch_is_left_to_generate_item_by_item(tmp_path):
    inner, items = Batching(batching=False), group()
    backend = wrap(inner, GenerationCache(tmp_path))
    report = prefetch_group(backend, requests_of(items))
    assert report.skipped == "not batching" and report.generated == 0 and inner.batches == []
    assert ask(backend, items[0])[0].text == FakeBackend().generate(items[0].prompt, max_tokens=8, stop=("\n",)).text  # fmt: skip
    assert inner.single == [items[0].prompt]


def test_a_failed_batch_leaves_each_item_to_fail_or_pass_alone(tmp_path):
    inner, items = Batching(fail=True), group()
    backend = wrap(inner, GenerationCache(tmp_path))
    report = prefetch_group(backend, requests_of(items))
    assert report.failed and "exceeds 8192" in report.failed and report.generated == 0
    ask(backend, items[0])
    assert inner.single == [items[0].prompt]


@pytest.mark.parametrize("cached", [True, False], ids=["cache", "no-cache"])
def test_prefetching_twice_generates_once(tmp_path, cached):
    inner, items = Batching(), group()
    backend = wrap(inner, GenerationCache(tmp_path) if cached else None)
    prefetch_group(backend, requests_of(items))
    again = prefetch_group(backend, requests_of(items))
    assert again.generated == 0 and again.cached == 4 and len(inner.batches) == 1
    assert [ask(backend, it)[0].cached for it in items] == [False] * 4


def test_the_model_fixtures_generate_batch_is_cached_and_logged_per_item(tmp_path):
    inner, items = Batching(), group()
    backend = wrap(inner, GenerationCache(tmp_path))
    with recording_calls([]) as calls:
        out = backend.generate_batch(requests_of(items))
    assert [g.text for g in out] == [ask(wrap(Batching(), None), it)[0].text for it in items]
    assert len(calls) == 4 and {c["batch_size"] for c in calls} == {4}
    assert len({c["key"] for c in calls}) == 4 and len(inner.batches) == 1


@pytest.mark.parametrize("chat", [False, True], ids=["completion", "chat"])
def test_a_request_sent_ahead_is_the_one_the_item_then_makes(tmp_path, chat):
    """--concurrency: what is sent ahead is the item's own first call (its system text, the
    stop strings the engine gets with stop_after_content), so the item's call takes it and
    nothing is generated twice."""
    from extractbench.suites.protocol import generate

    inner = Batching(batching=False)
    info = ModelInfo("fake", "fake", "", "")
    backend = CachingBackend(
        info, "fake:seed=0", lambda: inner, GenerationCache(tmp_path), concurrency=2, chat=chat
    )
    system = "Read the record." if chat else ""
    items = [  # a chat item's completion prompt begins with its system text (Item.system)
        replace(it, prefix=f"{system}\n\n{it.prefix}" if chat else it.prefix, system=system,
                stop=("\n",), stop_after_content=True)
        for it in group(2)
    ]  # fmt: skip
    assert backend.prefetch(it.request() for it in items) == 2
    for item in items:
        with recording_calls([]):
            generate(item, backend)
    assert len(inner.single) == 2  # one generation per item, none again
    backend.close()
