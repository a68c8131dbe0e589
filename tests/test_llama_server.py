"""The real ``llama-server`` (``extractbench server build``; CI builds it before the tests)
with the default model: parallel slots under ``--serve``, two servers with prefix affinity,
one killed mid-run.

Without a built server these tests skip, unless ``EXTRACTBENCH_REQUIRE_LLAMA_SERVER`` is true
(CI sets it): then a missing server fails them, so the release gate cannot lose them quietly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from extractbench.fixtures.models.llama_cpp.serve import MODEL_ALIAS, LocalServer, start_server
from extractbench.fixtures.models.openai.endpoints import rank
from extractbench.suites.model_files import default_model_path
from tests.conftest import read_json, toy_rows
from tests.test_plugin import MODES

# A few hundred tokens of document before each toy record, so that a prompt's prefill
# takes long enough for requests to overlap, and its reuse shows in the server's counts.
FILLER = " ".join(
    f"Section {n}: the applicant filed the device description, its intended use and the "
    f"predicate comparison table number {n}."
    for n in range(12)
)


@pytest.fixture
def long_toy(toy, llama_server, monkeypatch):
    """The toy project with long documents (3 groups of 4 items), and the built
    llama-server on PATH (pytester's HOME is a temporary folder, so the user cache where
    it was built is not this run's)."""
    rows = toy_rows(3)
    for row in rows:
        row["text"] = f"{FILLER}\n{row['text']}"
    (toy.path / "data" / "toy.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    monkeypatch.setenv("PATH", f"{llama_server.binary.parent}{os.pathsep}{os.environ['PATH']}")
    return toy


def in_flight_peak(log: Path) -> int:
    """Most tasks llama-server was processing at once, from its own log lines
    (``processing task`` when a slot starts one, ``stop processing`` when it ends)."""
    now = peak = 0
    for line in log.read_text(errors="replace").splitlines():
        if "processing task" in line:
            now += 1
            peak = max(peak, now)
        elif "stop processing" in line:
            now -= 1
    return peak


def answers(record: dict) -> list[tuple]:
    return [(i["id"], i["prediction"], i["scores"]) for i in record["items"]]


def serve(toy, record: Path, *args: str) -> tuple[pytest.RunResult, dict]:
    result = toy.runpytest_subprocess(
        "--serve", "--no-cache", "--data-dir", "data", "--report-json", str(record), *args
    )
    return result, read_json(record)


@pytest.mark.slow
def test_serve_starts_llama_server_with_slots_and_keeps_them_busy(long_toy, llama_server):
    """``--serve`` with one slot answers exactly as the in-process backend. ``--serve -n 2
    --concurrency 2``: llama-server with 4 slots, the workers' requests in flight at once
    (counted from the server's log), each group's requests on the slot it is pinned to;
    each answer is its own item's (the server counted that item's prompt tokens); most
    answers equal one request at a time.

    Not all: llama.cpp sums in another order for another batch shape (slots decoded
    together, a prefix computed in another prefill), and the toy's guesses (``weight`` is
    in no document) can flip. The record names the slot count, and the cache key holds it.
    """
    log = long_toy.path / ".extractbench" / "server.log"
    result, one = serve(long_toy, long_toy.path / "one.json")
    assert result.ret == 0, result.stdout.str()
    assert in_flight_peak(log) == 1
    assert one["model"]["backend"] == "openai (--serve: llama-server -np 1)"
    # --weight-repack auto: llama-server gets --no-repack where in-process llama.cpp would
    # load unrepacked (an AMX CPU: repacking segfaults there), and the record says so
    repack = one["model"]["weight_repack"]["repack"]
    assert one["settings"]["server"]["weight_repack"] is repack
    assert one["model"]["fingerprint"].endswith(":repack=off") is (not repack)
    # one slot, the in-process backend's batch sizes and attention: the same answers
    result = long_toy.runpytest_subprocess(
        "--no-cache", "--data-dir", "data", "--report-json", "local.json"
    )
    assert result.ret == 0, result.stdout.str()
    assert answers(one) == answers(read_json(long_toy.path / "local.json"))
    result, many = serve(long_toy, long_toy.path / "many.json", "-n", "2", "--concurrency", "2")
    assert result.ret == 0, result.stdout.str()
    server = many["settings"]["server"]
    assert server["program"] == "llama-server" and server["slots"] == 4
    assert server["binary"] == str(llama_server.binary) and server["source"] == "PATH"
    assert many["settings"]["dist"] == "loadgroup"  # slots: each worker keeps its group
    assert many["model"]["fingerprint"].startswith("served-llama-server-np4:")
    # each worker's group on one of its slots (id_slot): the two workers' requests at once,
    # every request sent to the slot its group is pinned to
    assert in_flight_peak(log) >= 2, log.read_text()[-3000:]
    assert log.read_text(errors="replace").count("selected slot by id") >= 12
    assert many["counts"]["scored"] == 12
    prompts = [(i["id"], i["calls"][0]["prompt_tokens"]) for i in many["items"]]
    assert prompts == [(i["id"], i["calls"][0]["prompt_tokens"]) for i in one["items"]]
    same = sum(a == b for a, b in zip(answers(many), answers(one), strict=True))
    assert same >= 8, (answers(many), answers(one))  # shuffled answers would agree on ~3


def _server(port_log: Path) -> LocalServer:
    return start_server(
        default_model_path(), n_ctx=2048, n_threads=1, slots=1, seed=0, log=port_log
    )


@pytest.mark.parametrize("mode", MODES)
def test_two_llama_servers_reuse_each_groups_prefix_and_survive_one_killed(
    long_toy, llama_server, mode
):
    """Two llama-server processes: with affinity every item after a group's first reuses
    at least 90% of its prompt from the server's cache (``timings.cache_n``); the
    server a group goes to is killed after two items and the run completes on the other,
    with the record naming the one taken out."""
    logs = long_toy.path / "logs"
    a, b = _server(logs / "a.log"), _server(logs / "b.log")
    # the server that group toy/d0 goes to is killed after two items
    first, second = sorted((a, b), key=lambda s: s.url != rank("toy/d0", [a.url, b.url])[0])
    try:
        urls = [a.url, b.url]
        common = ["--backend", "openai", "--model-name", MODEL_ALIAS, "--data-dir", "data",
                  "--no-cache", "--max-retries", "0", *mode]  # fmt: skip
        routes = [a for u in urls for a in ("--base-url", u)]
        record = long_toy.path / "affinity.json"
        result = long_toy.runpytest_subprocess(*common, *routes, "--report-json", str(record))
        assert result.ret == 0, result.stdout.str()
        affinity = read_json(record)
        seen: set[str] = set()
        for item in affinity["items"]:
            call = item["calls"][0]
            if item["group"] in seen:
                assert call["reused_prompt_tokens"] >= 0.9 * call["prompt_tokens"], call
            seen.add(item["group"])
        long_toy.makeconftest(
            long_toy.path.joinpath("conftest.py").read_text() + KILLER.format(pid=first.process.pid)
        )
        record = long_toy.path / "killed.json"
        result = long_toy.runpytest_subprocess(*common, *routes, "--report-json", str(record))
    finally:
        a.stop(), b.stop()
    assert result.ret == 0, result.stdout.str()
    killed = read_json(record)
    assert killed["counts"]["scored"] == 12 and killed["complete"] is True
    assert killed["endpoints"][first.url]["taken_out"], killed["endpoints"]
    assert killed["endpoints"][second.url]["taken_out"] is None
    result.stdout.fnmatch_lines([f"endpoint {first.url}: *TAKEN OUT*"])


KILLER = """

_done = []


def pytest_runtest_logreport(report):
    import contextlib, os, signal
    if report.when == "call":
        _done.append(report.nodeid)
        if len(_done) == 2:  # in the controller and in each worker: the first one kills
            with contextlib.suppress(ProcessLookupError):
                os.kill({pid}, signal.SIGKILL)
"""
