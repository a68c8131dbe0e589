"""Fail closed with a server behind the model: a hung or trickling server never
keeps the run alive after SIGTERM, and cached answers are reused only for the same server
build and model (its fingerprint), black-box through pytest and the fake OpenAI server."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from extractbench.fixtures.models.cache import GenerationCache
from extractbench.fixtures.models.fake.backend import ScriptedBackend
from extractbench.fixtures.models.openai.server_identity import identify_server, server_root
from extractbench.fixtures.models.wrappers import CachingBackend
from extractbench.suites.model import ModelError, ModelInfo
from tests.conftest import Output, interruptible, read_json
from tests.fake_openai import MODEL_ID, FakeOpenAIServer, chat_unless_given
from tests.test_fail_closed import _alive, _children

REQUEST_TIMEOUT = 10  # seconds (--request-timeout): the run must end within this + 5 s


def _wait_in_flight(server: FakeOpenAIServer, n: int, output: Output, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while server.in_flight < n:
        assert time.monotonic() < deadline, "".join(output.lines)[-3000:]
        assert output.proc.poll() is None, output.finish()[-3000:]
        time.sleep(0.1)


@pytest.mark.parametrize(
    ("fault", "mode", "stop"),
    [("hang", ["-n", "0"], signal.SIGTERM), ("trickle", ["-n", "0"], signal.SIGTERM),
     ("trickle", ["-n", "0"], signal.SIGINT), ("hang", ["-n", "2"], signal.SIGTERM),
     ("trickle", ["-n", "2"], signal.SIGTERM)],
    ids=["hang-serial", "trickle-serial", "trickle-serial-sigint", "hang-xdist", "trickle-xdist"],
)  # fmt: skip
def test_a_signal_ends_the_run_while_a_hung_server_holds_its_requests(toy, fault, mode, stop):
    """Four requests held by a server that never answers (or answers one byte every half
    second, so no read timeout fires): SIGTERM or Ctrl-C ends the run within
    --request-timeout + 5 s, with its record written (INCOMPLETE, exit 2).

    Under xdist the bound holds through execnet, which interrupts a busy worker 5 s after
    the controller asks it to stop (about 8 s in all, measured); serially the process
    ended 1.3 s after SIGTERM, against 4 x 10 s of timeouts and retries before the
    request threads became daemons (``fixtures/models/request_threads.py``)."""
    server = FakeOpenAIServer(fault=fault, hang_s=3600).start()
    record = toy.path / "record.json"
    args = [sys.executable, "-m", "pytest", "--backend", "openai", "--base-url", server.url,
            "--model-name", MODEL_ID, "--data-dir", "data", "--report-json", str(record),
            "--no-cache", "--concurrency", "4", "--request-timeout", str(REQUEST_TIMEOUT),
            "--max-retries", "3", "-p", "no:cacheprovider", "--chat", "off", *mode]  # fmt: skip
    proc = interruptible(args, toy.path)
    output = Output(proc)
    try:
        _wait_in_flight(server, 4 * (2 if "2" in mode else 1), output)
        workers = _children(proc.pid)
        start = time.monotonic()
        proc.send_signal(stop)
        try:
            proc.wait(timeout=REQUEST_TIMEOUT + 5)
        except Exception:
            proc.kill()
            raise AssertionError(
                f"still running {REQUEST_TIMEOUT + 5} s after {stop.name}:\n{output.finish()[-3000:]}"
            ) from None
        elapsed = time.monotonic() - start
        out = output.finish()
    finally:
        server.stop()
    print(f"exited {elapsed:.1f} s after {stop.name}")
    assert elapsed < REQUEST_TIMEOUT + 5
    assert proc.returncode == 2, out[-3000:]
    rec = read_json(record)
    assert rec["complete"] is False and rec["interrupted"] == stop.name
    assert "Traceback" not in out
    time.sleep(1)
    assert not any(_alive(pid) for pid in workers)  # no worker left behind either


def test_request_threads_run_calls_at_most_n_at_once_and_cancel_the_rest_on_shutdown():
    import threading

    from extractbench.fixtures.models.request_threads import RequestThreads

    pool = RequestThreads(2)
    gate, running, peak = threading.Event(), [], []

    def call(i: int) -> int:
        running.append(i)
        peak.append(len(running))
        gate.wait(10)
        running.remove(i)
        if i == 1:
            raise ValueError("answer 1 is malformed")
        return i * 10

    futures = [pool.submit(call, i) for i in range(5)]
    while len(running) < 2:
        time.sleep(0.01)
    pool.shutdown()  # the three calls not started are cancelled
    gate.set()
    assert futures[0].result(5) == 0
    with pytest.raises(ValueError, match="answer 1"):
        futures[1].result(5)
    assert all(f.cancelled() for f in futures[2:]) and max(peak) == 2
    assert all(t.daemon for t in pool._threads)
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit(call, 9)


# ---------------------------------------------------------------- the server's fingerprint


def test_llama_server_and_vllm_are_identified_by_what_they_report():
    llama = FakeOpenAIServer(flavour="llama-server").start()
    other_quant = FakeOpenAIServer(
        flavour="llama-server", props={"model_path": "/models/gemma-3-270m-it-Q8_0.gguf"}
    ).start()
    vllm = FakeOpenAIServer(flavour="vllm").start()
    shorter = FakeOpenAIServer(flavour="vllm", card={"max_model_len": 8192}).start()
    plain = FakeOpenAIServer().start()
    try:
        first = identify_server([llama.url], MODEL_ID)
        assert first.source == "llama-server GET /props" and first.reusable
        assert first.facts["build_info"] == "b6500-0123abcd" and first.facts["n_ctx"] == 4096
        assert first.facts["meta"]["size"] == 253231104 and len(first.digest) == 16
        assert identify_server([llama.url], MODEL_ID).digest == first.digest  # stable
        assert identify_server([other_quant.url], MODEL_ID).digest != first.digest
        v = identify_server([vllm.url], MODEL_ID)
        assert v.facts == {"root": "google/gemma-3-270m-it", "parent": None,
                           "max_model_len": 32768, "owned_by": "vllm", "version": "0.6.3"}  # fmt: skip
        assert identify_server([shorter.url], MODEL_ID).digest != v.digest
        none = identify_server([plain.url], MODEL_ID)
        assert (none.source, none.digest, none.reusable) == ("none", "", False)
        assert none.tag() == ":server=unidentified"
        assert none.to_dict()["cache"].startswith("not reused across runs")
        trusted = identify_server([plain.url], MODEL_ID, trust_cache=True)
        assert trusted.reusable and trusted.tag() == none.tag()
        assert "--trust-cache" in trusted.to_dict()["cache"]
        pinned = identify_server([plain.url], MODEL_ID, revision="r1")
        assert pinned.reusable and pinned.digest
        assert identify_server([plain.url], MODEL_ID, revision="r2").digest != pinned.digest
        with pytest.raises(ModelError, match=r"serve fake-served differently \(.*b6500"):
            identify_server([llama.url, other_quant.url], MODEL_ID)
        assert identify_server([llama.url, llama.url + "/"], MODEL_ID).digest == first.digest
    finally:
        for server in (llama, other_quant, vllm, shorter, plain):
            server.stop()


def test_credentials_in_the_url_stay_out_of_the_fingerprint():
    server = FakeOpenAIServer(flavour="llama-server", props={"model_path": "/m/x.gguf"}).start()
    try:
        url = server.url.replace("http://", "http://me:s3cret@")
        identity = identify_server([url], MODEL_ID)
    finally:
        server.stop()
    assert (
        identity.source == "llama-server GET /props" and identity.facts["model_path"] == "/m/x.gguf"
    )
    assert "s3cret" not in str(identity.to_dict())
    assert server_root("http://me:pw@h:8/api/v1/?key=k") == "http://me:pw@h:8/api?key=k"


def test_answers_of_an_unidentified_server_are_stored_but_not_reused(tmp_path):
    cache = GenerationCache(tmp_path)
    server = ScriptedBackend(lambda prompt: " Acme")
    info = ModelInfo("m", "openai", "http://h/v1", "")
    for reuse, expected in ((False, 1), (False, 2), (True, 2)):
        backend = CachingBackend(info, "fp", lambda: server, cache, reuse_cached=reuse)
        assert not backend.generate("Applicant: Acme\napplicant:", max_tokens=8).cached or reuse
        assert len(server.prompts) == expected  # trusted (reuse): the stored answer comes back
    cache.close()


def _cached_run(toy, server, *args):
    """A run of the first 4 toy items against ``server`` with a generation cache that
    outlives it; the completions the server was asked for, and the record."""
    before = len(server.requests)
    record = toy.path / "cached.json"
    result = toy.runpytest_subprocess(
        "--backend", "openai", "--base-url", server.url, "--model-name", MODEL_ID,
        "--data-dir", "data", "--report-json", str(record), "--cache-dir", "gencache",
        "--limit", "4", "-p", "no:cacheprovider", *args, *chat_unless_given(args),
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    return len(server.requests) - before, read_json(record)


@pytest.mark.parametrize(
    "mode", [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]
)
def test_another_build_behind_the_same_model_name_does_not_reuse_cached_answers(toy, mode):
    first = FakeOpenAIServer(flavour="llama-server").start()
    port = int(first.url.rsplit(":", 1)[1].split("/")[0])
    try:
        asked, record = _cached_run(toy, first, *mode)
        assert asked == 4
        server = record["model"]["server"]
        assert server["source"] == "llama-server GET /props"
        assert server["facts"]["build_info"] == "b6500-0123abcd"
        assert server["cache"].startswith("reused across runs")
        assert server["sha256"] in record["model"]["fingerprint"]
        asked, record = _cached_run(toy, first, *mode)
        assert asked == 0 and all(c["cached"] for it in record["items"] for c in it["calls"])
    finally:
        first.stop()
    # another quantisation at the same URL under the same model name
    requantised = FakeOpenAIServer(
        flavour="llama-server", props={"model_path": "/models/gemma-3-270m-it-Q8_0.gguf"},
        port=port,
    ).start()  # fmt: skip
    assert requantised.url == first.url
    try:
        asked, record = _cached_run(toy, requantised, *mode)
    finally:
        requantised.stop()
    assert asked == 4 and not any(c["cached"] for it in record["items"] for c in it["calls"])


def test_answers_of_a_server_without_fingerprint_are_reused_only_when_trusted_or_pinned(toy):
    server = FakeOpenAIServer().start()
    try:
        assert _cached_run(toy, server)[0] == 4
        asked, record = _cached_run(toy, server)
        assert asked == 4  # nothing identifies the answers: not reused
        assert record["model"]["server"]["source"] == "none"
        assert record["model"]["server"]["cache"].startswith("not reused across runs")
        asked, record = _cached_run(toy, server, "--trust-cache")
        assert asked == 0 and "--trust-cache" in record["model"]["server"]["cache"]
        assert _cached_run(toy, server, "--model-revision", "r1")[0] == 4
        asked, record = _cached_run(toy, server, "--model-revision", "r1")
        assert asked == 0 and record["model"]["server"]["revision"] == "r1"
        assert _cached_run(toy, server, "--model-revision", "r2")[0] == 4
    finally:
        server.stop()


def test_a_model_changed_in_place_with_its_size_and_mtime_kept_is_hashed_and_run_again(toy):
    """A copy of the default model run on 2 items, then 4 MiB of its weights overwritten
    in place, its size kept and its mtime set back (``touch -r``): the next run names a new
    digest and generates both items again instead of answering from the old model's cache."""
    import shutil

    from extractbench.suites.model_files import default_model_path

    model = toy.path / "candidate.gguf"
    shutil.copyfile(default_model_path(), model)
    args = ("--model", str(model), "--limit", "2", "-p", "no:cacheprovider")
    record = toy.path / "record.json"
    first = toy.runpytest_subprocess("--data-dir", "data", "--report-json", str(record), *args)
    assert first.ret in (0, 1), first.stdout.str()[-2000:]
    before = read_json(record)
    assert before["counts"]["calls"] == 2 and before["counts"]["cached_calls"] == 0
    stamp = model.stat()
    with model.open("r+b") as fh:  # weights past the header; the size stays
        fh.seek(stamp.st_size // 2)
        fh.write(bytes(range(256)) * (4 << 12))
    os.utime(model, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert (model.stat().st_size, model.stat().st_mtime_ns) == (stamp.st_size, stamp.st_mtime_ns)
    again = toy.runpytest_subprocess("--data-dir", "data", "--report-json", str(record), *args)
    assert again.ret in (0, 1), again.stdout.str()[-2000:]
    after = read_json(record)
    assert after["model"]["sha256"] != before["model"]["sha256"]
    assert after["counts"]["calls"] == 2 and after["counts"]["cached_calls"] == 0
