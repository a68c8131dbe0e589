"""Chat and instruct models through the plugin, black-box with pytester: the
usage errors, chat against an OpenAI-compatible server (tests/fake_openai.py), and chat
in process on a templated copy of the default model (llama-cpp and hf)."""

from __future__ import annotations

import pytest

from tests.chat_gguf import GEMMA_STYLE_TEMPLATE, templated_gguf
from tests.conftest import TOY_SUITE, read_json, require_installed
from tests.fake_openai import MODEL_ID, FakeOpenAIServer
from tests.test_plugin import MODES, run

INSTRUCTION = "Read the record."
# the toy suite with a system text: a completion prompt that begins with it
CHAT_TOY_SUITE = TOY_SUITE.replace(
    "prefix=f\"{row['text']}\\n\",",
    f'prefix=f"{INSTRUCTION}\\n\\n{{row[\'text\']}}\\n", system="{INSTRUCTION}",',
)
assert CHAT_TOY_SUITE != TOY_SUITE


@pytest.fixture
def chat_toy(toy: pytest.Pytester) -> pytest.Pytester:
    toy.makepyfile(toy_suite=CHAT_TOY_SUITE)
    return toy


@pytest.fixture(scope="module")
def chat_gguf():
    return templated_gguf()


def served(toy, server, mode, *args):
    record = toy.path / "served.json"
    result = toy.runpytest_subprocess(
        "--backend", "openai", "--base-url", server.url, "--model-name", MODEL_ID,
        "--data-dir", "data", "--report-json", str(record), "--no-cache", *mode, *args,
    )  # fmt: skip
    return result, (read_json(record) if record.exists() else {})


def one_usage_line(result: pytest.RunResult, *needles: str) -> None:
    assert result.ret == 4, result.stdout.str()
    lines = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(lines) == 1 and all(n in lines[0] for n in needles), result.stderr.str()
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


# ------------------------------------------------------------------ usage errors, exit 4


@pytest.mark.parametrize("mode", MODES)
def test_chat_on_with_the_base_gguf_is_one_usage_line(toy, mode):
    result = toy.runpytest_subprocess(
        "--backend", "llama-cpp", "--chat", "on", "--data-dir", "data", *mode
    )
    one_usage_line(result, "--chat on", "has no chat template", "--chat off")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--chat", "on"], ("--chat on", "has no chat mode")),
        (["--system-prompt", "Be brief."], ("--system-prompt", "chat is off")),
    ],
    ids=["fake-has-no-chat", "system-prompt-without-chat"],
)
def test_chat_options_that_cannot_work_are_one_usage_line(toy, mode, args, needles):
    result, record = run(toy, mode, *args)
    one_usage_line(result, *needles)
    assert record == {}  # nothing ran


def test_an_unknown_chat_mode_is_a_usage_error(toy):
    result, _ = run(toy, [], "--chat", "sometimes")
    assert result.ret == 4 and "invalid choice: 'sometimes'" in result.stderr.str()


# ------------------------------------------------------------------ a chat server


@pytest.mark.parametrize("mode", MODES)
def test_a_server_with_a_template_gets_messages_and_answers_like_completion(chat_toy, mode):
    """auto: llama-server reports a chat template, so each call goes as messages (the
    suite's system text, the rest of its prompt as the user message); the answers, after
    the parsing rules, are right where the fake model's completions are."""
    _, local = run(chat_toy, mode, "--no-cache")
    server = FakeOpenAIServer(flavour="llama-server").start()
    try:
        result, record = served(chat_toy, server, mode)
    finally:
        server.stop()
    assert result.ret == 0, result.stdout.str()
    accuracy = record["aggregates"]["toy/accuracy"]
    assert accuracy == local["aggregates"]["toy/accuracy"]
    # the answers lost their leading space (toy/length: characters of the answer)
    assert record["aggregates"]["toy/length"]["mean"] < local["aggregates"]["toy/length"]["mean"]
    assert local["model"]["chat"]["enabled"] is False
    chat = record["model"]["chat"]
    assert chat["enabled"] and chat["reason"] == "auto: llama-server GET /props"
    assert chat["template_sha256"] == record["model"]["server"]["facts"]["chat_template_sha256"]
    assert {r["path"] for r in server.requests} == {"/v1/chat/completions"}
    first = server.requests[0]["messages"]
    assert first[0] == {"role": "system", "content": INSTRUCTION}
    assert first[1]["role"] == "user" and not first[1]["content"].startswith(INSTRUCTION)
    answers = record["counts"]["calls"]
    assert record["chat"]["answers"] == answers
    # the fake answers " value", or "unknown" where the document has no such line (weight)
    unknown = sum(1 for it in record["items"] if it["id"].endswith("/weight"))
    assert 0 < unknown < answers
    assert record["chat"]["rules"]["whitespace"] == answers - unknown
    example = record["chat"]["examples"]["toy"]
    assert example["item"] == min(it["id"] for it in record["items"])
    assert example["messages"][0]["content"] == INSTRUCTION
    assert not any("messages" in c for it in record["items"] for c in it["calls"])


@pytest.mark.parametrize(
    ("args", "system"),
    [(["--system-prompt", "none"], None), (["--system-prompt", "Be brief."], "Be brief.")],
    ids=["none", "text"],
)
def test_system_prompt_replaces_the_suites_system_message(chat_toy, args, system):
    server = FakeOpenAIServer(flavour="llama-server").start()
    try:
        result, record = served(chat_toy, server, [], "--limit", "2", *args)
    finally:
        server.stop()
    assert result.ret == 0, result.stdout.str()
    sent = [r["messages"] for r in server.requests]
    if system is None:
        assert all([m["role"] for m in ms] == ["user"] for ms in sent)
    else:
        assert all(ms[0] == {"role": "system", "content": system} for ms in sent)
    assert record["model"]["chat"]["system_prompt"] == (system or "none")


def test_a_server_that_reports_no_template_makes_auto_ask_for_on_or_off(chat_toy):
    server = FakeOpenAIServer().start()  # no /props: nothing says whether it has a template
    try:
        result, record = served(chat_toy, server, [], "--limit", "2")
        one_usage_line(result, "--chat auto", "does not report its model's chat template",
                       "--chat on", "--chat off")  # fmt: skip
        assert record == {} and not server.requests  # before any model call
        result, record = served(chat_toy, server, [], "--limit", "2", "--chat", "off")
        assert result.ret == 0 and record["model"]["chat"]["enabled"] is False
        assert {r["path"] for r in server.requests} == {"/v1/completions"}
        server.requests.clear()
        result, record = served(chat_toy, server, [], "--limit", "2", "--chat", "on")
    finally:
        server.stop()
    assert result.ret == 0, result.stdout.str()
    assert {r["path"] for r in server.requests} == {"/v1/chat/completions"}
    assert record["model"]["chat"]["template_sha256"] is None
    assert "unreported" in record["model"]["fingerprint"]


@pytest.mark.parametrize("where", ["remote", "same-machine"])
def test_a_base_model_behind_llama_server_s_chatml_fallback_runs_without_a_template(
    chat_toy, where
):
    """llama-server reports its built-in ChatML template for a GGUF that has none: that is
    the server's fallback, not the model's, so ``--chat auto`` stays on completions (the
    GGUF read when its path is readable here, else the fallback recognised), and ``--chat
    on`` is refused."""
    from extractbench.fixtures.models.openai.chat import LLAMA_CPP_FALLBACKS
    from extractbench.suites.model_files import default_model_path

    path = str(default_model_path()) if where == "same-machine" else "/elsewhere/base.gguf"
    props = {"chat_template": LLAMA_CPP_FALLBACKS["chatml"], "model_path": path}
    server = FakeOpenAIServer(flavour="llama-server", props=props).start()
    try:
        result, record = served(chat_toy, server, [], "--limit", "2")
        assert result.ret == 0, result.stdout.str()
        assert record["model"]["chat"]["enabled"] is False
        assert {r["path"] for r in server.requests} == {"/v1/completions"}
        refused, _ = served(chat_toy, server, [], "--limit", "2", "--chat", "on")
    finally:
        server.stop()
    one_usage_line(refused, "--chat on", "no chat template")


def test_a_chat_run_is_rescored_with_the_same_parsing(chat_toy):
    server = FakeOpenAIServer(flavour="llama-server").start()
    try:
        result, record = served(chat_toy, server, [])
    finally:
        server.stop()
    assert result.ret == 0
    rescored = chat_toy.path / "rescored.json"
    again = chat_toy.runpytest_subprocess(
        "--rescore", "served.json", "--data-dir", "data", "--report-json", str(rescored)
    )
    assert again.ret == 0, again.stdout.str()
    other = read_json(rescored)
    assert other["aggregates"] == record["aggregates"]
    assert other["chat"]["rules"] == record["chat"]["rules"]
    assert other["chat"]["examples"] == record["chat"]["examples"]  # kept from the record


def test_merged_shards_keep_the_chat_section_of_the_whole_run(chat_toy):
    server = FakeOpenAIServer(flavour="llama-server").start()
    try:
        _, whole = served(chat_toy, server, [])
        for i in (1, 2):
            served(chat_toy, server, [], "--shard", f"{i}/2", "--report-json", f"s{i}.json")
    finally:
        server.stop()
    merged = chat_toy.path / "merged.json"
    result = chat_toy.run("extractbench", "merge", "s1.json", "s2.json", "-o", str(merged))
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    chat = read_json(merged)["chat"]
    assert chat["rules"] == whole["chat"]["rules"] and chat["answers"] == whole["chat"]["answers"]
    assert chat["examples"] == whole["chat"]["examples"]


# ------------------------------------------------------------------ chat in process


@pytest.mark.parametrize("mode", MODES)
def test_llama_cpp_chat_on_a_templated_gguf_reuses_each_groups_prefix(chat_toy, chat_gguf, mode):
    """The template renders the suite's system text and the document before the key, so
    the second item of a group takes the document from the KV cache (reused tokens)."""
    record_path = chat_toy.path / "llama.json"
    result = chat_toy.runpytest_subprocess(
        "--model", str(chat_gguf), "--data-dir", "data", "--report-json", str(record_path),
        "--no-cache", "-k", "d0 or d1", *mode,
    )  # fmt: skip
    assert result.ret in (0, 1), result.stdout.str()  # the base model's answers may be wrong
    record = read_json(record_path)
    chat = record["model"]["chat"]
    assert chat["enabled"] and chat["reason"] == "auto: GGUF tokenizer.chat_template"
    assert record["model"]["fingerprint"].endswith(f":template={chat['template_sha256'][:16]}")
    assert record["counts"]["scored"] == 8 and record["chat"]["answers"] == 8
    messages = record["chat"]["examples"]["toy"]["messages"]
    assert messages[0] == {"role": "system", "content": INSTRUCTION}
    for doc in ("d0", "d1"):
        calls = [it["calls"][0] for it in record["items"] if f"/{doc}/" in it["id"]]
        reused = [c["reused_prompt_tokens"] for c in calls]
        assert reused[0] == 0 and all(r > 10 for r in reused[1:]), reused  # the group's prefix


@pytest.mark.slow
def test_hf_renders_the_same_chat_tokens_as_llama_cpp(chat_toy, chat_gguf):
    """transformers loads the templated GGUF and its tokenizer's template (the same text):
    each chat prompt has exactly the tokens llama.cpp renders (one BOS, not two)."""
    require_installed("transformers", "torch")
    counts = {}
    for backend in ("llama-cpp", "hf"):
        path = chat_toy.path / f"{backend}.json"
        result = chat_toy.runpytest_subprocess(
            "--backend", backend, "--model", str(chat_gguf), "--chat", "on", "--data-dir",
            "data", "--report-json", str(path), "--no-cache", "-k", "d0 and applicant",
        )  # fmt: skip
        assert result.ret in (0, 1), result.stdout.str()
        record = read_json(path)
        assert record["model"]["chat"]["enabled"] and record["counts"]["scored"] == 1
        counts[backend] = [c["prompt_tokens"] for it in record["items"] for c in it["calls"]]
    assert counts["hf"] == counts["llama-cpp"]
    assert "start_of_turn" in GEMMA_STYLE_TEMPLATE
