"""``--serve`` and ``--backend openai`` against the real ``llama-server`` (CPU build) with the
default model and the real FDA data: ``--n-gpu-layers`` passed to the server (``auto`` on a
build with no GPU: none), the slots sized from the items, the same answers in process,
through ``--serve`` and through ``--base-url`` (a base model: no chat template, whatever the
server's fallback), items that cannot fit the server's window refused in one line before
any model call, and a server killed mid-run stopping the run, incomplete, with the next run
resuming from the cache.

Skipped without a built server unless ``EXTRACTBENCH_REQUIRE_LLAMA_SERVER`` is true (CI).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from extractbench.fixtures.models.llama_cpp.serve import MODEL_ALIAS, start_server
from extractbench.suites.model_files import default_model_path
from tests.conftest import read_json

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("EXTRACTBENCH_CI_DATA") or ROOT.parent / "shared" / "data")
# two FDA chunks of 14 items each (K051543, K052193): 28 items, two prefills per run
TWO_CHUNKS = ("-k", "K051543 or K052193", "--allow-subset")

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="needs the pinned data")


def fda(tmp: Path, name: str, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    """``pytest suites/fda ARGS`` from the checkout, its record at ``tmp/name.json``."""
    record = tmp / f"{name}.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "suites/fda", "--data-dir", str(DATA), "-p",
         "no:cacheprovider", "--no-step-summary", "--report-json", str(record), *args],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    return done, (json.loads(record.read_text()) if record.exists() else {})


def answers(record: dict) -> dict[str, str]:
    return {item["id"]: item["prediction"] for item in record["items"]}


def usage_line(done: subprocess.CompletedProcess, *needles: str) -> str:
    assert done.returncode == 4, done.stdout[-3000:] + done.stderr[-2000:]
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if all(n in ln for n in needles)]
    assert lines, done.stdout[-3000:] + done.stderr[-2000:]
    return lines[0]


@pytest.mark.slow
def test_serve_takes_n_gpu_layers_and_sizes_its_slots_for_the_items(llama_server, tmp_path):
    done, record = fda(tmp_path, "served", "--serve", "--n-gpu-layers", "auto", "--limit", "3",
                       "--no-cache")  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    server = record["settings"]["server"]
    assert server["program"] == "llama-server" and server["n_gpu_layers"] == "0"  # no GPU here
    assert server["n_ctx_per_slot"] == 4096  # FDA's longest prompt and answer: the minimum
    assert record["counts"]["scored"] == 3
    refused, _ = fda(tmp_path, "all", "--serve", "--n-gpu-layers", "all", "--limit", "3")
    usage_line(refused, "--n-gpu-layers all", "lists no GPU", "extractbench server build")


@pytest.mark.slow
def test_the_same_items_in_process_served_and_through_a_base_url(llama_server, tmp_path):
    """The base model (no chat template in its GGUF) answers 28 FDA items alike in process,
    through ``--serve`` (one slot) and through ``--backend openai`` against a llama-server,
    whose ``/props`` reports llama.cpp's ChatML fallback: completions everywhere."""
    local_done, local = fda(tmp_path, "local", *TWO_CHUNKS, "--no-cache")
    assert local_done.returncode == 0, local_done.stdout[-3000:]
    served_done, served = fda(tmp_path, "served", *TWO_CHUNKS, "--no-cache", "--serve")
    assert served_done.returncode == 0, served_done.stdout[-3000:]
    server = start_server(default_model_path(), n_ctx=4096, n_threads=2, slots=1, seed=0,
                          log=tmp_path / "server.log")  # fmt: skip
    try:
        remote_done, remote = fda(tmp_path, "remote", *TWO_CHUNKS, "--no-cache", "--backend",
                                  "openai", "--base-url", server.url, "--model-name", MODEL_ALIAS)  # fmt: skip
    finally:
        server.stop()
    assert remote_done.returncode == 0, remote_done.stdout[-3000:]
    assert len(answers(local)) == 28
    assert answers(served) == answers(local) and answers(remote) == answers(local)
    for record in (local, served, remote):
        assert record["model"]["chat"]["enabled"] is False, record["model"]["chat"]


def test_items_that_cannot_fit_the_server_are_one_line_before_any_call(llama_server, tmp_path):
    server = start_server(default_model_path(), n_ctx=1024, n_threads=1, slots=2, seed=0,
                          log=tmp_path / "server.log")  # fmt: skip
    try:
        done, _ = fda(tmp_path, "remote", "--limit", "2", "--no-cache", "--backend", "openai",
                      "--base-url", server.url, "--model-name", MODEL_ALIAS)  # fmt: skip
    finally:
        server.stop()
    line = usage_line(done, "2 of 2 items do not fit", "1024 tokens per slot (2 slots)")
    assert "start llama-server with -c " in line and " -np 2" in line
    assert "processing task" not in (tmp_path / "server.log").read_text()  # no request
    served, _ = fda(tmp_path, "served", "--limit", "2", "--no-cache", "--serve", "--serve-ctx", "1024")  # fmt: skip
    assert "pass --serve-ctx " in usage_line(served, "2 of 2 items do not fit")


KILLER = """

_calls = []


def pytest_runtest_logreport(report):
    import os, signal
    from extractbench.fixtures.plugin import MODELS_KEY

    if report.when != "call" or not hasattr(report, "extractbench_item"):
        return
    _calls.append(report.nodeid)
    server = _config[0].stash[MODELS_KEY].server
    if len(_calls) == 3 and server is not None:  # the controller: it started the server
        os.kill(server.process.pid, signal.SIGKILL)


_config = []


def pytest_configure(config):
    _config.append(config)
"""


@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_killed_server_stops_the_run_incomplete_and_the_next_run_resumes(
    toy, llama_server, monkeypatch, mode
):
    monkeypatch.setenv("PATH", f"{llama_server.binary.parent}{os.pathsep}{os.environ['PATH']}")
    conftest = toy.path / "conftest.py"
    plain = conftest.read_text()
    conftest.write_text(plain + KILLER)
    common = ["--serve", "--data-dir", "data", "--cache-dir", "gencache", *mode]
    start = time.monotonic()
    result = toy.runpytest_subprocess(*common, "--report-json", "killed.json")
    elapsed = time.monotonic() - start
    killed = read_json(toy.path / "killed.json")
    assert result.ret == 1, result.stdout.str()
    assert killed["complete"] is False and "killed by SIGKILL" in killed["stopped"]
    assert "the --serve server (llama-server, pid " in killed["stopped"]
    assert elapsed < 120, elapsed  # stopped within seconds, not after every item's retries
    answered = [i for i in killed["items"] if i["outcome"] == "passed"]
    assert len(answered) >= 3
    conftest.write_text(plain)
    result = toy.runpytest_subprocess(*common, "--report-json", "again.json")
    assert result.ret == 0, result.stdout.str()
    again = read_json(toy.path / "again.json")
    assert again["complete"] is True and again["counts"]["scored"] == 24
    cached = {i["id"] for i in again["items"] if all(c.get("cached") for c in i["calls"])}
    assert {i["id"] for i in answered} <= cached
