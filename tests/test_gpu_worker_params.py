"""An xdist worker loads the model with the same llama.cpp parameters as one process does,
black-box and without a GPU: a conftest makes llama.cpp report two CUDA GPUs and offload,
and records the keyword arguments of the model's ``Llama(...)`` load (and the process
settings llama.cpp reads at load: its default model parameters, the flash-attention type,
``CUDA_VISIBLE_DEVICES``), then loads it on the CPU. A worker's process starts with
``CUDA_VISIBLE_DEVICES`` narrowed to its GPU, so it needs no device index: its load equals
the single process's. Only ``--gpus`` in one process (which sees every GPU) names the
device, with llama.cpp's split mode none."""

from __future__ import annotations

import json

from tests.conftest import TOY_CONFTEST

RECORD_LOAD = """
import json
import os

import extractbench.fixtures.models.llama_cpp.devices as devices
import extractbench.fixtures.models.llama_cpp.gpu as llama_gpu
import llama_cpp
import llama_cpp.llama_cpp as native
from extractbench.fixtures.models.gpus import Gpu

AT_IMPORT = os.environ.get("CUDA_VISIBLE_DEVICES", "unset")  # before pytest configures
devices.llama_devices = lambda: [
    Gpu(0, "CUDA0: Fake H200", 143771, source="llama.cpp"),
    Gpu(1, "CUDA1: Fake H200", 143771, source="llama.cpp"),
]
llama_gpu.supports_gpu_offload = lambda: True  # what a CUDA build says
_real = llama_cpp.Llama


def _recording(*args, **kwargs):
    if kwargs.get("vocab_only"):  # the tokenizer: loaded for real
        return _real(*args, **kwargs)
    facts = {k: v for k, v in kwargs.items() if k != "model_path"}
    facts["use_extra_bufts"] = bool(native.llama_model_default_params().use_extra_bufts)
    facts["flash_attn_type"] = int(native.LLAMA_FLASH_ATTN_TYPE_ENABLED)
    facts["cuda_visible_devices"] = os.environ.get("CUDA_VISIBLE_DEVICES", "unset")
    facts["at_import"] = AT_IMPORT
    with open(f"load-{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.json", "w") as out:
        json.dump(facts, out)
    return _real(*args, **{**kwargs, "n_gpu_layers": 0})  # this CPU build: no layer offloaded


llama_cpp.Llama = _recording
"""

COMMON = ("--data-dir", "data", "--limit", "2", "--no-cache", "--threads", "1",
          "--n-gpu-layers", "all", "-p", "no:cacheprovider")  # fmt: skip
PROCESS = ("cuda_visible_devices", "at_import")  # where the process runs, not the load


def loads(toy, *args: str) -> dict[str, dict]:
    for old in toy.path.glob("load-*.json"):
        old.unlink()
    result = toy.runpytest_subprocess(*COMMON, *args)
    assert result.ret == 0, result.stdout.str()
    return {p.stem.removeprefix("load-"): json.loads(p.read_text()) for p in toy.path.glob("load-*.json")}  # fmt: skip


def without(facts: dict, keys: tuple[str, ...]) -> dict:
    return {k: v for k, v in facts.items() if k not in keys}


def test_a_worker_loads_as_one_process_does_and_only_gpus_names_the_device(toy, monkeypatch):
    # a single process names its file "main": not the xdist worker this test may run in
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    toy.makeconftest(TOY_CONFTEST + RECORD_LOAD)
    single = loads(toy, "-n", "0")["main"]
    assert single["n_gpu_layers"] == -1 and "main_gpu" not in single
    workers = loads(toy, "-n", "2", "--dist", "load")  # an item on each worker
    assert set(workers) == {"gw0", "gw1"}
    for name, facts in workers.items():
        assert without(facts, PROCESS) == without(single, PROCESS), name
        # narrowed when the process started, before the conftest was imported
        assert facts["at_import"] == facts["cuda_visible_devices"] == name.removeprefix("gw")
    chosen = loads(toy, "-n", "0", "--gpus", "1")["main"]
    differs = {k for k in chosen.keys() | single.keys() if chosen.get(k) != single.get(k)}
    assert differs == {"main_gpu", "split_mode"}
    assert chosen["main_gpu"] == 1 and chosen["split_mode"] == 0  # LLAMA_SPLIT_MODE_NONE
