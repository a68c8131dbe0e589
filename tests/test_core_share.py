"""The cores of finished xdist workers go to the running ones (fixtures/models/core_share.py):
the count, a worker's cores after its last item (black-box, ``-n 2``), and the same greedy
answers from llama.cpp at one thread and at two, switched on a loaded model."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from extractbench.fixtures.models import core_share
from extractbench.fixtures.models.llama_cpp.backend import LlamaCppBackend
from extractbench.fixtures.models.routing import routing
from extractbench.suites.model_files import default_model_path
from tests.conftest import ALL_CORES, read_json


@pytest.fixture
def share(tmp_path, monkeypatch):
    """An empty share folder, this process outside any share (under ``-n 2`` the worker
    running this test has joined its own run's share: restored afterwards)."""
    monkeypatch.setattr(core_share, "_share", None)
    monkeypatch.setattr(core_share, "_last", None)
    monkeypatch.setattr(core_share, "RECHECK_S", 0.0)
    folder = tmp_path / "cores"
    folder.mkdir()
    return folder


def test_running_processes_divide_the_cores_and_finished_ones_give_theirs_back(share):
    assert core_share.threads_now(3) == 3  # not joined: the fixed count
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    try:
        core_share.join(share, shared=4)
        (share / str(other.pid)).touch()
        (share / gone.stdout.strip()).touch()  # a crashed worker's marker: not counted
        assert core_share.threads_now(1) == 2
        other.kill()
        other.wait()
        assert core_share.threads_now(1) == 4
        (share / str(other.pid)).unlink()
        core_share.leave()
        assert core_share.threads_now(1) == 1 and sorted(p.name for p in share.iterdir()) == [
            gone.stdout.strip()
        ]
    finally:
        other.kill()
    assert core_share.shares_cores(2, None) and not core_share.shares_cores(2, 1)
    assert not core_share.shares_cores(1, None) and not core_share.shares_cores(0, None)


CORES_TEST = """
import json, os, time

import pytest
from extractbench.fixtures.models import core_share


@pytest.mark.xdist_group("long")
def test_long():
    before = core_share.threads_now(1)
    open("long_started", "w").close()
    deadline = time.monotonic() + 60  # until the other worker has finished its items
    while core_share.threads_now(1) == before and time.monotonic() < deadline:
        time.sleep(0.2)
    with open("threads.json", "w") as out:
        json.dump({"before": before, "after": core_share.threads_now(1)}, out)


@pytest.mark.xdist_group("short")
def test_short():
    # the other worker must count this one before it finishes: on a loaded machine it may
    # not yet have started its test when this one would otherwise be done
    deadline = time.monotonic() + 60
    while not os.path.exists("long_started") and time.monotonic() < deadline:
        time.sleep(0.1)
"""


@pytest.mark.skipif(len(ALL_CORES or ()) < 2, reason="needs two cores to share")
def test_a_worker_gets_the_cores_of_one_that_finished(toy, all_cores):
    toy.makepyfile(test_cores=CORES_TEST)
    result = toy.runpytest_subprocess(
        "test_cores.py", "test_toy.py", "-n", "2", "--data-dir", "data", "--report-json", "r.json"
    )
    assert result.ret == 0, result.stdout.str()
    threads = json.loads((toy.path / "threads.json").read_text())
    assert threads == {"before": core_share.cores() // 2, "after": core_share.cores()}, threads
    assert read_json(toy.path / "r.json")["settings"]["threads_shared"] is True
    fixed = toy.runpytest_subprocess(
        "test_toy.py", "-n", "2", "--threads", "1", "--data-dir", "data", "--report-json", "f.json"
    )
    assert fixed.ret == 0 and read_json(toy.path / "f.json")["settings"]["threads_shared"] is False
    fake = toy.runpytest_subprocess(  # a model that does not follow the share: not shared
        "test_toy.py",
        "-n",
        "2",
        "--backend",
        "fake",
        "--data-dir",
        "data",
        "--report-json",
        "k.json",
    )
    assert fake.ret == 0 and read_json(toy.path / "k.json")["settings"]["threads_shared"] is False


def test_llama_cpp_answers_the_same_at_one_thread_and_at_two(share, all_cores):
    backend = LlamaCppBackend(default_model_path(), n_ctx=2048, n_threads=1)
    text = " ".join(f"Device {i}: the Zenvia assay, lot {i * 37}, cleared in 20{i % 20:02d}."
                    for i in range(40))  # fmt: skip
    prompts = [f"{text}\nlot of device 31:", "One, two, three,"]

    def answers() -> list[tuple[str, int]]:
        out = []
        for n, prompt in enumerate(prompts):
            with routing(f"group-{n}-{backend._threads_now}"):  # an empty KV cache each
                generation = backend.generate(prompt, max_tokens=12)
            out.append((generation.text, generation.prompt_tokens))
        return out

    one = answers()
    core_share.join(share, shared=2)
    two = answers()
    assert backend._threads_now == 2 and one == two
    assert one[0][1] > 500  # a prefill of several batches of threads' work


def test_threads_change_between_the_batches_of_one_prefill_with_the_same_answers(
    share, monkeypatch
):
    """A long prompt's prefill (several 512-token batches) and its decode with the thread
    count switched between 1 and 2 at every batch: the answer of a fixed count."""
    text = " ".join(f"Device {i}: the Zenvia assay, lot {i * 37}, cleared in 20{i % 20:02d}."
                    for i in range(80))  # fmt: skip
    prompt = f"{text}\nlot of device 61:"
    fixed = LlamaCppBackend(default_model_path(), n_ctx=4096, n_threads=1)
    expected = fixed.generate(prompt, max_tokens=12)
    asked = []

    def alternate(n: int) -> int:
        asked.append(n)
        return 1 + len(asked) % 2

    monkeypatch.setattr(core_share, "threads_now", alternate)
    switching = LlamaCppBackend(default_model_path(), n_ctx=4096, n_threads=1)
    got = switching.generate(prompt, max_tokens=12)
    assert (got.text, got.prompt_tokens) == (expected.text, expected.prompt_tokens)
    assert expected.prompt_tokens > 1024 and len(asked) >= 3 + got.completion_tokens
