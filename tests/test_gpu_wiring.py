"""GPU and batched inference through the plugin, black-box with pytester and
without a GPU: the CPU build's own refusal and record, one GPU per xdist worker from an
injected device list, group prefetch through a batching backend installed as a third
party would, and transformers' ``--batch-size auto`` halving on an injected
out-of-memory error, each under ``-n 0`` and ``-n 2``."""

from __future__ import annotations

import json
import os

import pytest

from extractbench.fixtures.models.llama_cpp.gpu import supports_gpu_offload
from tests.conftest import TOY_CONFTEST, read_json, require_installed, toy_rows

# what a CPU build of llama-cpp-python does (CI's build); a CUDA build offloads instead
cpu_build = pytest.mark.skipif(supports_gpu_offload(), reason="this llama.cpp build offloads")

MODES = {"serial": ["-n", "0"], "xdist": ["-n", "2"]}

# a conftest that lists two fake GPUs (what torch or llama.cpp would on a GPU machine) and
# writes, in each worker at its end, the CUDA_VISIBLE_DEVICES the plugin pinned
FAKE_GPUS = """
import os

import extractbench.fixtures.models.llama_cpp.devices as devices
from extractbench.fixtures.models.gpus import Gpu

devices.llama_devices = lambda: [  # what a CUDA build of llama.cpp would list
    Gpu(0, "Fake A100", 40960, source="torch"), Gpu(1, "Fake L4", 23034, source="torch"),
]


def pytest_sessionfinish(session):
    worker = getattr(session.config, "workerinput", {}).get("workerid", "main")
    with open(f"pinned-{worker}.txt", "w") as out:
        out.write(os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))
"""

BATCHING_BACKEND = '''
from extractbench.fixtures.models.fake.backend import FakeBackend
from extractbench.fixtures.models.registry import BackendKind
from extractbench.suites.model import Capabilities, Generation, ModelInfo


class Batching(FakeBackend):
    """The fake model with a batch call (as hf's): each answer the single call's."""

    capabilities = Capabilities(batching=True)

    def generate_batch(self, requests):
        out = [FakeBackend.generate(self, r.prompt, max_tokens=r.max_tokens, stop=r.stop)
               for r in requests]
        return [Generation(g.text, g.prompt_tokens, g.completion_tokens, 0.01,
                           batch_size=len(requests)) for g in out]


TOY = BackendKind(
    name="toy-batch",
    resolve=lambda spec, model: spec,
    info=lambda spec: ModelInfo("batching-lookup", "toy-batch", "", ""),
    fingerprint=lambda spec: "toy-batch",
    load=lambda spec, items: Batching(),
    capabilities=lambda spec, items: Capabilities(batching=True),
    description="the fake model, a group at a time",
)
'''

# hf's batched generation fails with CUDA's out-of-memory error above two rows
OOM_ABOVE_TWO = """
import torch

import extractbench.fixtures.models.hf.backend as hf_module

_real = hf_module.generate_rows


def _small_device(model, rows, *args, **kwargs):
    if len(rows) > 2:
        raise torch.OutOfMemoryError("CUDA out of memory (injected)")
    return _real(model, rows, *args, **kwargs)


hf_module.generate_rows = _small_device
"""


def _install_backend(toy: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    site = toy.mkdir("site")
    (site / "toy_batch.py").write_text(BATCHING_BACKEND)
    dist = site / "toy_batch-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-batch\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[extractbench.backends]\ntoy-batch = toy_batch:TOY\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))


@cpu_build
def test_gpu_layers_on_the_cpu_build_is_one_usage_line_naming_the_cuda_build(toy):
    result = toy.runpytest_subprocess("--data-dir", "data", "--n-gpu-layers", "1")
    assert result.ret == 4
    errors = [line for line in result.stderr.lines if line.strip()]
    assert len(errors) == 1 and "GGML_CUDA=on" in errors[0], errors
    assert "--n-gpu-layers 0" in errors[0]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (
            ["--batch-size", "4"],
            "--batch-size 4: applies to --backend hf in process, not --backend llama-cpp",
        ),
        (
            ["--backend", "fake", "--flash-attn", "on"],
            "applies to --backend llama-cpp in process, not --backend fake",
        ),
        (["--backend", "hf", "--batch-size", "0"], "--batch-size 0: choose a number"),
        (["--n-ubatch", "0"], "--n-ubatch 0: must be >= 1"),
        (["--backend", "hf", "--device", "cuda"], "sees no CUDA GPU"),
        (["--gpus", "0,x"], "--gpus 0,x: not a list of GPU indices"),
        (
            ["--serve", "--n-ubatch", "64"],
            "not --serve; --serve takes --n-gpu-layers, --flash-attn and --weight-repack",
        ),
        (["--backend", "fake", "--gpus", "0"], "--gpus 0: applies to --backend llama-cpp or hf"),
        (
            ["--backend", "fake", "--weight-repack", "off"],
            "--weight-repack off: applies to --backend llama-cpp in process, not --backend fake",
        ),
        (["--weight-repack", "fast"], "--weight-repack fast: "),
    ],
    ids=[
        "hf-option-llama",
        "llama-option-fake",
        "batch-zero",
        "ubatch-zero",
        "no-cuda",
        "bad-gpus",
        "serve",
        "gpus-fake",
        "repack-fake",
        "repack-bad",
    ],  # fmt: skip
)
def test_hardware_options_that_cannot_work_are_one_usage_line(toy, args, needle):
    if "hf" in args:
        require_installed("torch", "transformers")
    if "cuda" in args:
        import torch

        if torch.cuda.is_available():
            pytest.skip("torch sees a CUDA GPU here")
    result = toy.runpytest_subprocess("--data-dir", "data", *args)
    one_usage_line(result, needle)


@cpu_build
@pytest.mark.parametrize("mode", MODES)
def test_the_cpu_build_runs_auto_on_the_cpu_and_the_record_says_so(toy, mode):
    result = toy.runpytest_subprocess(
        "--data-dir", "data", "--limit", "2", "--report-json", "r.json", "--no-cache", *MODES[mode]
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    llama = read_json(toy.path / "r.json")["model"]["llama_cpp"]
    assert llama["offload_supported"] is False and llama["devices"] == "cpu"
    assert llama["n_gpu_layers"] == "0" and llama["flash_attn"] == "off"
    assert llama["offload"].startswith("auto: none")


@pytest.mark.parametrize("mode", MODES)
def test_each_worker_gets_its_own_gpu_from_the_device_list(toy, mode):
    toy.makeconftest(TOY_CONFTEST + FAKE_GPUS)
    args = ["--data-dir", "data", "--limit", "2", "--report-json", "r.json", "--no-cache"]
    result = toy.runpytest_subprocess(
        *args, *MODES[mode], "--gpus", "1" if mode == "serial" else "0,1"
    )
    assert result.ret == 0, result.stdout.str()
    gpus = read_json(toy.path / "r.json")["model"]["worker_gpus"]
    if mode == "serial":  # one process: --gpus names the one, nothing narrowed
        assert gpus == {"gw0": "1: Fake L4, 23,034 MiB"}
        assert (toy.path / "pinned-main.txt").read_text() == os.environ.get(
            "CUDA_VISIBLE_DEVICES", "unset"
        )
    else:  # worker i on GPU i mod 2, each seeing its own alone
        assert gpus == {"gw0": "0: Fake A100, 40,960 MiB", "gw1": "1: Fake L4, 23,034 MiB"}
        assert (toy.path / "pinned-gw0.txt").read_text() == "0"
        assert (toy.path / "pinned-gw1.txt").read_text() == "1"


def test_more_workers_than_gpus_share_them_with_one_warning(toy):
    toy.makeconftest(TOY_CONFTEST + FAKE_GPUS)
    result = toy.runpytest_subprocess(
        "--data-dir", "data", "--limit", "2", "--no-cache", "-n", "2", "--gpus", "1",
        "--report-json", "r.json",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    assert "2 workers share 1 GPU(s)" in result.stdout.str()
    assert set(read_json(toy.path / "r.json")["model"]["worker_gpus"].values()) == {
        "1: Fake L4, 23,034 MiB"
    }
    assert (toy.path / "pinned-gw0.txt").read_text() == "1"


def test_a_gpu_that_is_not_visible_is_one_usage_line(toy):
    toy.makeconftest(TOY_CONFTEST + FAKE_GPUS)
    result = toy.runpytest_subprocess("--data-dir", "data", "-n", "2", "--gpus", "5")
    one_usage_line(result, "GPU 5 is not visible (visible: 0, 1)")


def one_usage_line(result: pytest.RunResult, needle: str) -> None:
    """Exit 4 with exactly one ``ERROR:`` line holding ``needle``, and no traceback."""
    assert result.ret == 4, result.stdout.str()
    lines = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(lines) == 1 and needle in lines[0], result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


@pytest.mark.parametrize("mode", MODES)
def test_group_prefetch_generates_each_group_in_one_batch(toy, monkeypatch, mode):
    """The group's first test generates the group's first calls in one batch; each item
    reads its own, logged with the batch size; the answers are the single calls'."""
    _install_backend(toy, monkeypatch)
    common = ["--data-dir", "data", "--report-json", "r.json", *MODES[mode]]
    result = toy.runpytest_subprocess(*common, "--backend", "toy-batch", "--cache-dir", "c")
    assert result.ret == 0, result.stdout.str()
    batched = read_json(toy.path / "r.json")
    result = toy.runpytest_subprocess(*common[:2], "--report-json", "f.json", "--backend", "fake")
    alone = read_json(toy.path / "f.json")
    sizes = {it["id"]: [c.get("batch_size") for c in it["calls"]] for it in batched["items"]}
    assert sizes and all(s == [4] for s in sizes.values()), sizes  # 6 groups of 4 keys
    predictions = {it["id"]: it["prediction"] for it in alone["items"]}
    assert {it["id"]: it["prediction"] for it in batched["items"]} == predictions
    # resumed: every answer from the cache, nothing generated again
    result = toy.runpytest_subprocess(*common, "--backend", "toy-batch", "--cache-dir", "c")
    again = read_json(toy.path / "r.json")
    assert all(c.get("cached") for it in again["items"] for c in it["calls"])
    assert {it["id"]: it["prediction"] for it in again["items"]} == predictions


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_hf_batch_size_auto_halves_on_out_of_memory_and_keeps_the_answers(toy, mode):
    require_installed("torch", "transformers")
    rows = toy_rows(n_docs=2)  # two groups of four keys: transformers on the CPU is slow
    (toy.path / "data" / "toy.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    common = ["--data-dir", "data", "--backend", "hf", "--no-cache", *MODES[mode]]
    result = toy.runpytest_subprocess(*common, "--report-json", "one.json")
    assert result.ret == 0, result.stdout.str()
    toy.makeconftest(TOY_CONFTEST + OOM_ABOVE_TWO)
    result = toy.runpytest_subprocess(*common, "--batch-size", "auto", "--report-json", "auto.json")
    assert result.ret == 0, result.stdout.str()
    one, auto = read_json(toy.path / "one.json"), read_json(toy.path / "auto.json")
    assert auto["model"]["hf"]["batch_size"] == "auto"
    assert ":batch_size=auto" in auto["model"]["fingerprint"]
    sizes = [c.get("batch_size") for it in auto["items"] for c in it["calls"]]
    assert set(sizes) == {2}, sizes  # groups of 4 tried at 4, halved to 2
    answers = {it["id"]: it["prediction"] for it in one["items"]}
    assert {it["id"]: it["prediction"] for it in auto["items"]} == answers
