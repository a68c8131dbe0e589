"""transformers batching on the CPU with the real default GGUF (a few short prompts):
batches and shared-prefix reuse give the batch-size-1 answers, each prompt stopped by its
own stop strings and budget, and ``auto`` survives an injected out-of-memory error."""

from __future__ import annotations

from dataclasses import replace

import pytest

from extractbench.suites.model import Request
from tests.conftest import require_installed

CHUNK = (
    "510(k) SUBSTANTIAL EQUIVALENCE DETERMINATION\n"
    "510(k) number: K153137\n"
    "Applicant: Roche Diagnostics Operations, Inc.\n"
    "Device name: cobas c 501 analyzer sodium assay\n"
    "Purpose for submission: New device.\n"
    "Measurand: Sodium in serum and plasma.\n"
    "Type of test: Quantitative, ion selective electrode.\n"
    "Proprietary and established names: cobas Na+ reagent.\n"
    "Regulation section: 21 CFR 862.1665, sodium test system.\n"
)


def requests() -> list[Request]:
    """A group sharing the chunk, plus one unrelated shorter prompt (padding), with
    different stop strings and budgets per request."""
    asks = [("applicant", ("\n",), 12), ("device name", (" ",), 12), ("510(k) number", ("\n",), 3),
            ("type of test", (",", "\n"), 12)]  # fmt: skip
    group = [Request(f"{CHUNK}{key}:", n, stop, prefix=CHUNK) for key, stop, n in asks]
    return [*group, Request("The capital of France is", 8, ("\n",))]


@pytest.fixture(scope="module")
def hf():
    require_installed("transformers", "torch")
    from extractbench.fixtures.models.hf.backend import HFBackend
    from extractbench.fixtures.models.hf.settings import HFOptions
    from extractbench.suites.model_files import default_model_path, file_sha256

    path = default_model_path()  # with its digest: transformers' conversion is kept and reused
    return HFBackend(
        path, n_threads=1, settings=HFOptions(prefix_reuse="off"), sha256=file_sha256(path)
    )


@pytest.fixture(scope="module")
def alone(hf):
    """Each request alone (batch size 1, whole prompt): the reference answers."""
    return [hf.generate(r.prompt, max_tokens=r.max_tokens, stop=r.stop) for r in requests()]


def answers(generations):
    return [(g.text, g.completion_tokens) for g in generations]


def test_each_request_alone_stops_at_its_own_stop_and_budget(alone):
    for r, g in zip(requests(), alone, strict=True):
        assert g.completion_tokens <= r.max_tokens
        assert not any(s in g.text for s in r.stop if s)
    assert alone[2].completion_tokens <= 3
    assert alone[1].text.strip() == alone[1].text.strip().split(" ")[0]  # cut at " "


def test_a_batch_gives_the_batch_size_one_answers(hf, alone):
    hf.placement = replace(hf.placement, batch_size=4, prefix_reuse=False)
    out = hf.generate_batch(requests())
    assert answers(out) == answers(alone)
    assert sorted(g.batch_size for g in out) == [1, 4, 4, 4, 4]  # 5 prompts: 4 then 1


def test_prefix_reuse_gives_the_whole_prompt_answers(hf, alone):
    hf.placement = replace(hf.placement, batch_size=1, prefix_reuse=True)
    computed = hf._prefixes.computed
    out = hf.generate_batch(requests())
    assert answers(out) == answers(alone)
    assert hf._prefixes.computed == computed + 1  # one prefix for the four chunk prompts
    assert all(g.batch_size == 1 for g in out)


def test_auto_halves_on_an_injected_out_of_memory_error(hf, alone, monkeypatch):
    import torch

    import extractbench.fixtures.models.hf.backend as hf_module

    real = hf_module.generate_rows
    tried: list[int] = []

    def small_device(model, rows, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003
        tried.append(len(rows))
        if len(rows) > 2:
            raise torch.OutOfMemoryError("CUDA out of memory (injected)")
        return real(model, rows, *args, **kwargs)

    monkeypatch.setattr(hf_module, "generate_rows", small_device)
    hf.placement = replace(hf.placement, batch_size=None, prefix_reuse=False)
    hf._fits = None
    out = hf.generate_batch(requests())
    assert answers(out) == answers(alone)  # nothing lost
    assert tried[:3] == [4, 2, 2] and sorted(g.batch_size for g in out) == [1, 2, 2, 2, 2]
    assert hf._fits == 2  # the next group starts at the size that fitted
