"""The openai backend against a fake OpenAI-compatible server, and --serve with the real
default model: the same black-box plugin checks as the fake backend, with and without -n 2."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

from extractbench.fixtures.models.openai.endpoints import rank
from extractbench.fixtures.models.openai.kind import OpenAIOptions
from extractbench.suites.model_files import ModelFileError, default_model_path
from tests.conftest import interruptible, read_json, require_installed
from tests.fake_openai import MODEL_ID, FakeOpenAIServer, chat_unless_given
from tests.test_plugin import MODES, run


@pytest.fixture
def server():
    fake = FakeOpenAIServer().start()
    yield fake
    fake.stop()


def openai_run(toy, server, mode, *args):
    record = toy.path / "openai.json"
    result = toy.runpytest_subprocess(
        "--backend", "openai", "--base-url", server.url, "--model-name", MODEL_ID,
        "--data-dir", "data", "--report-json", str(record), *mode, *args,
        *chat_unless_given(args),
    )  # fmt: skip
    return result, (read_json(record) if record.exists() else {})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("chat", [[], ["--chat"]], ids=["completions", "chat"])
def test_openai_backend_scores_like_the_in_process_fake(toy, server, mode, chat):
    _, local = run(toy, mode, "--no-cache")
    result, remote = openai_run(toy, server, mode, "--no-cache", *chat)
    assert result.ret == 0, result.stdout.str()
    if chat:  # chat answers lose their leading space (suites/answers.py): length differs
        assert remote["aggregates"]["toy/accuracy"] == local["aggregates"]["toy/accuracy"]
        assert remote["chat"]["rules"]["whitespace"] > 0
    else:
        assert remote["aggregates"] == local["aggregates"]
    assert remote["model"]["backend"] == "openai" and remote["model"]["path"] == server.url
    paths = {r["path"] for r in server.requests}
    assert paths == {"/v1/chat/completions" if chat else "/v1/completions"}
    assert all(r["temperature"] == 0 and r["seed"] == 0 for r in server.requests)


def test_openai_backend_retries_busy_answers(toy):
    busy = FakeOpenAIServer(fail_first=3).start()
    try:
        result, record = openai_run(toy, busy, [], "--no-cache", "--limit", "4")
    finally:
        busy.stop()
    assert result.ret == 0, result.stdout.str()
    assert record["counts"]["scored"] == 4 and len(busy.requests) == 4 + 3


def test_openai_generations_are_cached_by_endpoint_and_model(toy):
    """A server that reports what it serves (llama-server's /props): a repeated run is
    answered from the cache (tests/test_fail_closed_backends.py: one that reports nothing
    is not, unless --model-revision or --trust-cache)."""
    server = FakeOpenAIServer(flavour="llama-server").start()
    try:
        openai_run(toy, server, [], "--limit", "4")
        first = len(server.requests)
        result, record = openai_run(toy, server, [], "--limit", "4")
    finally:
        server.stop()
    assert result.ret == 0 and len(server.requests) == first == 4
    assert record["counts"]["cached_calls"] == 4


def test_unreachable_server_or_unknown_model_is_a_one_line_usage_error(toy, server):
    result = toy.runpytest_subprocess(
        "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model-name", "m"
    )
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--base-url http://127.0.0.1:9/v1: no OpenAI-compatible server*"])
    result = toy.runpytest_subprocess(
        "--backend", "openai", "--base-url", server.url, "--model-name", "gpt-nope"
    )
    assert result.ret == 4
    result.stderr.fnmatch_lines([f"*--model-name gpt-nope: not served by*it serves: {MODEL_ID}*"])
    result = toy.runpytest_subprocess("--backend", "openai")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--backend openai needs --base-url URL and --model-name NAME*"])


def _mapping(path: Path) -> list[int]:
    """Pids of processes that map ``path`` (llama.cpp mmaps its model file)."""
    pids = []
    for maps in Path("/proc").glob("[0-9]*/maps"):
        try:
            if str(path) in maps.read_text():
                pids.append(int(maps.parent.name))
        except OSError:
            continue
    return pids


def _server_pids() -> list[int]:
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            command = cmdline.read_bytes()  # repack off: the server runs under our module
            if (
                b"llama_cpp.server" in command
                or b"extractbench.fixtures.models.llama_cpp.repack" in command
            ):
                pids.append(int(cmdline.parent.name))
        except OSError:
            continue
    return pids


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
def test_serve_runs_one_model_process_for_two_workers_and_stops_on_ctrl_c(toy):
    model = default_model_path()
    before = set(_server_pids())
    record = toy.path / "served.json"
    args = [sys.executable, "-m", "pytest", "--serve", "-n", "2", "--no-cache",
            "--data-dir", "data", "--report-json", str(record), "--suite-option", "toy.delay=0.5",
            "-p", "no:cacheprovider"]  # fmt: skip
    proc = interruptible(args, toy.path)
    mapped: list[int] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        mapped = _mapping(model)
        log = toy.path / ".extractbench" / "server.log"
        if mapped and log.exists() and log.read_text().count("POST /v1/completions") >= 3:
            time.sleep(1.5)  # items are finishing now; their reports reach the controller
            mapped = _mapping(model)
            break
        time.sleep(0.5)
    servers = set(_server_pids()) - before
    assert len(mapped) == 1 and set(mapped) == servers, (mapped, servers)
    os.kill(proc.pid, signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    time.sleep(1)
    assert not (set(_server_pids()) - before), out.decode()[-2000:]
    stopped = read_json(record)
    assert stopped["complete"] is False
    assert stopped["model"]["backend"].startswith("openai (--serve")
    assert stopped["model"]["sha256"] and stopped["counts"]["scored"] > 0
    # a one-slot server (llama-cpp-python's) gets the items spread, not grouped per worker
    assert stopped["settings"]["dist"] == ("loadgroup" if shutil.which("llama-server") else "load")


@pytest.mark.slow
def test_hf_backend_runs_the_toy_suite_with_the_default_gguf(toy):
    require_installed("transformers", "torch")  # looked up, not imported (see require_installed)
    record = toy.path / "hf.json"
    result = toy.runpytest_subprocess(
        "--backend", "hf", "--data-dir", "data", "--report-json", str(record), "--limit", "4",
        "-n", "2",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    hf = read_json(record)
    assert hf["counts"]["scored"] == 4 and hf["model"]["backend"] == "hf"
    assert hf["model"]["sha256"] and "transformers" in hf["model"]["versions"]
    assert hf["model"]["fingerprint"].startswith("hf:")
    # The 270M model's answers are not asserted (they are often wrong); what the backend
    # owes the suite is: text cut at the stop sequence, real token counts, greedy length cap.
    for it in hf["items"]:
        assert it["prediction"].strip() and "\n" not in it["prediction"], it
        assert 1 <= it["tokens"]["completion"] <= 8 and 10 <= it["tokens"]["prompt"] <= 40, it
        contained = it["reference"].lower() in it["prediction"].lower()
        assert it["scores"]["accuracy"] == float(contained)


def test_the_registry_holds_each_backend_and_keeps_the_cache_fingerprints():
    """One entry point per --backend; the fingerprints (generation-cache keys) of the fake
    and the llama-cpp backends are those the if-ladders gave, so an upgrade keeps their
    cached generations; chat is named after the seed for every backend."""
    from extractbench.fixtures.models import ModelSpec, backend_names
    from extractbench.fixtures.models.registry import installed_backends

    assert backend_names() == ("llama-cpp", "hf", "openai", "fake")
    kinds = installed_backends()
    assert list(kinds) == list(backend_names()) and all(k.name == n for n, k in kinds.items())
    assert [n for n, k in kinds.items() if k.in_process] == ["llama-cpp", "hf"]
    assert ModelSpec("fake", None, 3, 1).fingerprint() == "fake-lookup:seed=3"
    remote = ModelSpec(
        "openai", None, 0, 1, chat=True,
        options=OpenAIOptions(base_url=("http://h/v1",), model_name="m"),
    )  # fmt: skip
    assert remote.fingerprint() == "openai:http://h/v1:m:seed=0:chat=True"
    assert remote.info().backend == "openai" and remote.info().path == "http://h/v1"
    path = default_model_path()
    local = ModelSpec("llama-cpp", path, 0, 1)
    assert local.fingerprint() == f"llama-cpp:{local.info().sha256}:seed=0"
    assert len(local.info().sha256) == 64


@pytest.mark.parametrize(
    ("change", "says"),
    [({"name": "other"}, "not a BackendKind named 'toy'"),
     ({"options": dict}, "are not a BackendOptions class"),
     ({"options": OpenAIOptions()}, "are not a BackendOptions class")],
)  # fmt: skip
def test_a_backend_entry_point_that_is_not_a_backend_is_one_line(change, says):
    from dataclasses import replace

    from extractbench.fixtures.models.fake.kind import FAKE
    from extractbench.fixtures.models.registry import check_backend_kind

    toy = replace(FAKE, name="toy")
    assert check_backend_kind("toy = pkg:TOY", "toy", toy) is toy
    with pytest.raises(ModelFileError) as caught:
        check_backend_kind("toy = pkg:TOY", "toy", replace(toy, **change))
    assert says in str(caught.value) and "toy = pkg:TOY" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_llama_cpp_reuses_a_groups_prefix_and_starts_each_group_with_an_empty_cache():
    """Within a group the chunk's KV cache is reused (only the new tokens are evaluated);
    a new group evaluates its whole prompt, whatever ran before it on the worker, so its
    answers do not depend on the order of groups (shards, worker counts)."""
    from extractbench.fixtures.models.llama_cpp.backend import LlamaCppBackend
    from extractbench.fixtures.models.routing import routing

    backend = LlamaCppBackend(default_model_path(), n_ctx=512, n_threads=1)
    evaluated: list[int] = []
    original = backend._llm.eval
    backend._llm.eval = lambda tokens: (evaluated.append(len(tokens)), original(tokens))[1]

    def first_eval(group: str, prompt: str) -> tuple[int, int]:
        evaluated.clear()
        with routing(group):
            out = backend.generate(prompt, max_tokens=1)
        return evaluated[0], out.prompt_tokens

    chunk = "Applicant: Acme Corp.\nDevice: a blue widget of 12 mm.\n"
    done, total = first_eval("a", chunk + "applicant:")
    assert done == total  # the first prompt of the worker: all of it
    done, total = first_eval("a", chunk + "device:")
    assert done < total - 10  # the chunk came from the cache
    done, total = first_eval("b", chunk + "device:")  # same text, another group
    assert done == total  # nothing reused across groups


def test_a_cached_run_counts_tokens_and_sizes_the_context_without_loading_weights(tmp_path):
    """MINEA asks the model to count tokens and for its context window; the llama-cpp
    row answers both from the vocabulary, so a fully cached run never loads the weights
    (the wrapper must not forward the question to the loaded model)."""
    from extractbench.fixtures.models import (
        GenerationCache,
        ModelSpec,
        caching_backend,
        load_backend,
    )
    from extractbench.suites.item import Item

    items = [Item(id="t/a", group="t/a", prefix="The applicant is Acme.\n", suffix="applicant:",
                  reference="Acme", meta={}, max_tokens=8)]  # fmt: skip
    spec = ModelSpec("llama-cpp", default_model_path(), 0, 1)
    wrapped = caching_backend(spec, items, GenerationCache(tmp_path))
    text = "Extract every entity of this piece: Acme Corp, 12 mm, blue."
    counted = wrapped.count_tokens(text)
    capabilities = wrapped.capabilities
    assert not wrapped.loaded
    assert capabilities.count_tokens and capabilities.grammar and capabilities.n_ctx >= 4096
    loaded = load_backend(spec, items)
    assert counted == loaded.count_tokens(text) > 5
    assert capabilities == loaded.capabilities
    fake = caching_backend(ModelSpec("fake", None, 0, 1), items, None)
    assert not fake.capabilities.count_tokens and not fake.loaded
    with pytest.raises(Exception, match="does not count tokens"):
        fake.count_tokens(text)


@pytest.mark.parametrize("mode", MODES)
def test_concurrency_keeps_a_groups_requests_in_flight_with_the_same_results(toy, mode):
    """--concurrency 4: a group's four items are sent together (counted server-side);
    every score, prediction and per-item call log is what one request at a time gives."""
    slow = FakeOpenAIServer(latency_s=0.2).start()
    try:
        result, one = openai_run(toy, slow, mode, "--no-cache")
        assert result.ret == 0, result.stdout.str()
        assert slow.max_in_flight == (2 if mode else 1)  # one request per worker
        slow.max_in_flight = 0
        result, four = openai_run(toy, slow, mode, "--no-cache", "--concurrency", "4")
        assert result.ret == 0, result.stdout.str()
        assert slow.max_in_flight >= 3 and slow.max_in_flight <= 4 * (2 if mode else 1)
    finally:
        slow.stop()
    assert four["aggregates"] == one["aggregates"]
    pick = [(it["id"], it["prediction"], it["scores"], len(it["calls"])) for it in four["items"]]
    assert pick == [
        (it["id"], it["prediction"], it["scores"], len(it["calls"])) for it in one["items"]
    ]
    assert all(len(it["calls"]) == 1 for it in four["items"])


def test_concurrency_is_for_servers_only(toy):
    result = toy.runpytest_subprocess("--backend", "fake", "--concurrency", "4")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--concurrency 4: for requests to a server (--backend openai or --serve)*"]
    )
    result = toy.runpytest_subprocess("--backend", "fake", "--concurrency", "0")
    result.stderr.fnmatch_lines(["*--concurrency 0: must be at least 1*"])


def _endpoints_run(toy, servers, *args):
    record = toy.path / "endpoints.json"
    urls = [arg for s in servers for arg in ("--base-url", s.url)]
    result = toy.runpytest_subprocess(
        "--backend", "openai", *urls, "--model-name", MODEL_ID, "--data-dir", "data",
        "--report-json", str(record), "--no-cache", *args, *chat_unless_given(args),
    )  # fmt: skip
    return result, read_json(record)


@pytest.mark.parametrize("mode", MODES)
def test_several_endpoints_keep_each_group_on_one_and_survive_one_failing(toy, server, mode):
    """Two endpoints: every group's items go to one of them (its prefix stays in that
    server's cache), both are used, the scores are one endpoint's; when one starts
    failing mid-run it is taken out and the run completes on the other, saying so."""
    _, single = openai_run(toy, server, mode, "--no-cache")
    a, b = FakeOpenAIServer().start(), FakeOpenAIServer().start()
    try:
        result, record = _endpoints_run(toy, [a, b], *mode)
    finally:
        a.stop(), b.stop()
    assert result.ret == 0, result.stdout.str()
    assert record["aggregates"] == single["aggregates"]
    where: dict[str, set[str]] = {}
    for item in record["items"]:
        where.setdefault(item["group"], set()).update(c["endpoint"] for c in item["calls"])
    # affinity: each group on the endpoint rendezvous hashing ranks first for it
    assert where == {g: {rank(g, [a.url, b.url])[0]} for g in where}
    assert sum(s["requests"] for s in record["endpoints"].values()) == 24
    assert len(a.requests) + len(b.requests) == 24
    first, second = FakeOpenAIServer().start(), FakeOpenAIServer().start()
    # the one that group toy/d0 goes to starts failing after two answers
    dying, healthy = sorted(
        (first, second), key=lambda s: s.url != rank("toy/d0", [first.url, second.url])[0]
    )
    dying.fault_after = 2
    try:
        result, record = _endpoints_run(toy, [healthy, dying], "--max-retries", "0", *mode)
    finally:
        healthy.stop(), dying.stop()
    assert result.ret == 0, result.stdout.str()
    assert record["counts"]["scored"] == 24 and record["aggregates"] == single["aggregates"]
    stats = record["endpoints"]
    assert stats[dying.url]["failures"] >= 1 and "503" in stats[dying.url]["taken_out"]
    assert stats[dying.url]["requests"] == 2
    result.stdout.fnmatch_lines([f"endpoint {dying.url}: 2 requests, * failed, *TAKEN OUT*503*"])


def test_round_robin_routing_alternates_endpoints_and_splits_groups(toy, server):
    """``--routing round-robin`` (a plain load balancer): serially, request k goes to
    endpoint k mod 2, so a group's items land on both servers; the scores are the same."""
    _, single = openai_run(toy, server, (), "--no-cache")
    a, b = FakeOpenAIServer().start(), FakeOpenAIServer().start()
    try:
        result, record = _endpoints_run(toy, [a, b], "--routing", "round-robin")
    finally:
        a.stop(), b.stop()
    assert result.ret == 0, result.stdout.str()
    assert record["aggregates"] == single["aggregates"]
    assert len(a.requests) == len(b.requests) == 12
    where: dict[str, set[str]] = {}
    for item in record["items"]:
        where.setdefault(item["group"], set()).update(c["endpoint"] for c in item["calls"])
    assert all(len(endpoints) == 2 for endpoints in where.values()), where


def test_every_endpoint_failing_stops_the_run(toy):
    a, b = FakeOpenAIServer(fault_after=0).start(), FakeOpenAIServer(fault_after=0).start()
    try:
        result, record = _endpoints_run(toy, [a, b], "--max-retries", "0")
    finally:
        a.stop(), b.stop()
    assert result.ret == 1 and record["complete"] is False
    assert "every endpoint failed" in record["stopped"]


def test_rendezvous_ranking_spreads_groups_and_moves_only_a_removed_endpoints_groups():
    urls = [f"http://10.0.0.{n}:8080/v1" for n in range(4)]
    groups = [f"fda/K{n:06d}/c0" for n in range(400)]
    first = {g: rank(g, urls)[0] for g in groups}
    counts = [sum(v == u for v in first.values()) for u in urls]
    assert min(counts) > 60  # about 100 each
    without = {g: rank(g, urls[1:])[0] for g in groups}
    assert all(without[g] == first[g] for g in groups if first[g] != urls[0])


def test_served_llama_cpp_prefills_a_groups_first_request_from_its_first_token(server):
    """``--serve`` (fresh_groups): the first request of each group asks llama.cpp not to
    reuse the previous group's prompt (``cache_prompt: false``), as the in-process backend
    resets; the group's later requests may reuse its prefix. Other servers get no such
    field."""
    from extractbench.fixtures.models.openai.backend import OpenAIBackend
    from extractbench.fixtures.models.routing import routing

    served = OpenAIBackend(server.url, MODEL_ID, fresh_groups=True, max_retries=0)
    plain = OpenAIBackend(server.url, MODEL_ID, max_retries=0)
    for backend, group in [
        (served, "a"),
        (served, "a"),
        (served, "b"),
        (served, "a"),
        (plain, "c"),
    ]:
        with routing(group):
            backend.generate(f"{group} text\nkey:", max_tokens=4)
    assert [r.get("cache_prompt", True) for r in server.requests] == [
        False,
        True,
        False,
        False,
        True,
    ]


SECRET_PASS, SECRET_KEY = "PLANTED-url-password", "PLANTED-env-api-key"


@pytest.mark.parametrize("mode", MODES)
def test_credentials_in_the_base_url_reach_no_output(toy, server, mode, monkeypatch):
    """A password in --base-url and a key in OPENAI_API_KEY: the run works, and neither
    appears in any file it writes (record, JUnit, HTML, markdown, generation cache) nor in
    its terminal output, also when the server is unreachable (the error line)."""
    require_installed("pytest_html")
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_KEY)
    url = server.url.replace("http://", f"http://alice:{SECRET_PASS}@")
    result = toy.runpytest_subprocess(
        "--backend", "openai", "--base-url", url, "--model-name", MODEL_ID, "--data-dir",
        "data", "--report-json", "openai.json", "--limit", "4", "--junitxml", "junit.xml",
        "--html", "report.html", "--summary-md", "summary.md", "--chat", "off", *mode,
    )  # fmt: skip
    record = read_json(toy.path / "openai.json")
    assert result.ret == 0, result.stdout.str()
    assert record["model"]["path"] == server.url.replace("http://", "http://***@")
    assert "#cred=" in record["model"]["fingerprint"]
    assert all(c["endpoint"].startswith("http://***@") for i in record["items"] for c in i["calls"])
    down = toy.runpytest_subprocess(
        "--backend", "openai", "--base-url", f"http://bob:{SECRET_PASS}@127.0.0.1:9/v1",
        "--model-name", "m", "--data-dir", "data",
    )  # fmt: skip
    assert down.ret == pytest.ExitCode.USAGE_ERROR
    down.stderr.fnmatch_lines(["*--base-url http://***@127.0.0.1:9/v1: no OpenAI-compatible*"])
    outputs = [result.stdout.str(), result.stderr.str(), down.stdout.str(), down.stderr.str()]
    written = [p for p in toy.path.rglob("*") if p.is_file() and p.suffix != ".py"]
    assert {"openai.json", "junit.xml", "report.html", "summary.md"} <= {p.name for p in written}
    for text in outputs + [p.read_bytes().decode("latin-1") for p in written]:
        assert SECRET_PASS not in text and SECRET_KEY not in text


def test_a_spec_without_a_repacking_decision_lets_the_backend_decide_it(monkeypatch):
    """A llama.cpp spec built without ``--weight-repack``'s decision (a test's, a script's)
    must not load repacked weights, which crash AMX CPUs: the backend decides as ``auto``."""
    import extractbench.fixtures.models.llama_cpp.backend as llama_cpp
    from extractbench.fixtures.models import ModelSpec
    from extractbench.fixtures.models.llama_cpp import kind as kinds

    seen: dict = {}
    monkeypatch.setattr(llama_cpp, "LlamaCppBackend", lambda *args, **kwargs: seen.update(kwargs))
    monkeypatch.setattr(kinds, "_llama_n_ctx", lambda spec, items: 512)
    kinds._llama_load(ModelSpec("llama-cpp", default_model_path(), 0, 1, default=True), [])
    assert "repack" in seen and seen["repack"] is None
