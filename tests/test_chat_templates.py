"""Chat templates checked once before the first item, black-box with pytester: a reasoning
model's reply that holds only the closing think tag, and a template that rejects the system
role, against a llama-server-like fake (tests/fake_openai.py, which renders its reported
template and answers its errors with HTTP 500) and in process on a templated GGUF."""

from __future__ import annotations

import pytest

from tests.chat_gguf import GEMMA_STYLE_TEMPLATE, NO_SYSTEM_THINKING_TEMPLATE, templated_gguf
from tests.conftest import read_json, require_installed
from tests.fake_openai import FakeOpenAIServer
from tests.test_chat_plugin import CHAT_TOY_SUITE, INSTRUCTION, one_usage_line, served
from tests.test_plugin import MODES, run

GATE = ("--gate", "toy/accuracy>=0.9")  # the fake model scores below it: its weight is unknown


@pytest.fixture
def chat_toy(toy: pytest.Pytester) -> pytest.Pytester:
    """The toy suite with a system text (tests/test_chat_plugin.py)."""
    toy.makepyfile(toy_suite=CHAT_TOY_SUITE)
    return toy


def reasoning(user: str) -> str:
    """A reasoning model's thoughts: candidates and the record quoted, so every reference
    value of the toy suite occurs in them (containment would credit each)."""
    return f"Is it blue? 3 kg? Let me read the record again: {user}"


def quoting(user: str, answer: str) -> str:
    """The reply to a prompt that opened <think>: reasoning, the closing tag, the answer."""
    return f"{reasoning(user)}</think>{answer}"


def spent(user: str, answer: str) -> str:
    """A reply that is reasoning only: the budget ran out before the block closed."""
    return reasoning(user)


def serve(chat_toy, mode, reply, template=None, *args):
    props = {"chat_template": template} if template else None
    server = FakeOpenAIServer(flavour="llama-server", props=props, reply=reply).start()
    try:
        result, record = served(chat_toy, server, mode, *args)
    finally:
        server.stop()
    return result, record, server


def no_traceback(result: pytest.RunResult) -> None:
    assert "Traceback" not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("mode", MODES)
def test_reasoning_before_a_closing_think_tag_is_never_scored(chat_toy, mode):
    """The template opens <think> in the prompt, so the reply holds only the closing
    tag; the reasoning before it (which quotes every value of the record) is dropped,
    the run scores what the model answered and the gate fails on it."""
    _, local = run(chat_toy, mode, "--no-cache")
    result, record, _ = serve(chat_toy, mode, quoting, None, *GATE)
    assert result.ret == 1, result.stdout.str()
    no_traceback(result)
    assert record["aggregates"]["toy/accuracy"] == local["aggregates"]["toy/accuracy"]
    answers = record["chat"]["answers"]
    assert answers == record["counts"]["calls"] and record["chat"]["rules"]["think"] == answers


@pytest.mark.parametrize("mode", MODES)
def test_a_template_without_the_system_role_gets_the_system_text_in_the_user_message(
    chat_toy, mode,
):  # fmt: skip
    """The server's template raises "System role not supported": the run checks it once
    before the first item and sends each call's system text as the beginning of its user
    message; the template also opens <think>, so the answers after the closing tag score
    as the fake model's completions."""
    _, local = run(chat_toy, mode, "--no-cache")
    result, record, server = serve(chat_toy, mode, quoting, NO_SYSTEM_THINKING_TEMPLATE)
    assert result.ret == 0, result.stdout.str()
    no_traceback(result)
    sent = [r["messages"] for r in server.requests]
    assert sent and all([m["role"] for m in ms] == ["user"] for ms in sent)
    assert all(ms[0]["content"].startswith(f"{INSTRUCTION}\n\n") for ms in sent)
    chat = record["model"]["chat"]
    assert chat["system_role"] == "folded into the user message"
    assert chat["system_rejected"] == "System role not supported" and chat["opens_think"]
    example = record["chat"]["examples"]["toy"]["messages"]
    assert [m["role"] for m in example] == ["user"] and example[0]["content"] in {
        ms[0]["content"] for ms in sent
    }
    assert record["aggregates"]["toy/accuracy"] == local["aggregates"]["toy/accuracy"]
    assert record["chat"]["rules"]["think"] == record["chat"]["answers"]
    # --rescore finishes the logged replies the same way (the block the prompt opened)
    rescored = chat_toy.path / "rescored.json"
    again = chat_toy.runpytest_subprocess(
        "--rescore", "served.json", "--data-dir", "data", "--report-json", str(rescored)
    )
    assert again.ret == 0, again.stdout.str()
    assert read_json(rescored)["aggregates"] == record["aggregates"]


@pytest.mark.parametrize("mode", MODES)
def test_a_reply_that_is_only_reasoning_scores_empty(chat_toy, mode):
    """The template opens <think> and the reply never closes it (the budget ran out in
    the reasoning, which quotes every value): every answer is empty and the gate fails."""
    result, record, _ = serve(chat_toy, mode, spent, NO_SYSTEM_THINKING_TEMPLATE, *GATE)
    assert result.ret == 1, result.stdout.str()
    no_traceback(result)
    assert record["aggregates"]["toy/accuracy"]["mean"] == 0.0
    assert record["aggregates"]["toy/length"]["mean"] == 0.0


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("template", "args", "needles"),
    [
        (NO_SYSTEM_THINKING_TEMPLATE, ["--system-prompt", "Be brief."],
         ("--system-prompt", "takes no system message (System role not supported)",
          "--system-prompt none")),
        ("{{ raise_exception('this template is broken') }}", [],
         ("--chat", "cannot render a user message (this template is broken)", "--chat off")),
    ],
    ids=["system-prompt-text", "broken-template"],
)  # fmt: skip
def test_a_template_that_cannot_send_what_was_asked_is_one_usage_line(
    chat_toy, mode, template, args, needles,
):  # fmt: skip
    result, record, server = serve(chat_toy, mode, None, template, *args)
    one_usage_line(result, *needles)
    assert record == {} and server.requests == []  # no model call


def test_system_prompt_none_with_a_template_without_the_system_role(chat_toy):
    result, record, server = serve(
        chat_toy, [], quoting, NO_SYSTEM_THINKING_TEMPLATE, "--system-prompt", "none"
    )
    assert result.ret == 0, result.stdout.str()
    sent = [r["messages"] for r in server.requests]
    assert all([m["role"] for m in ms] == ["user"] for ms in sent)
    assert not any(ms[0]["content"].startswith(INSTRUCTION) for ms in sent)
    assert record["model"]["chat"]["system_role"] == "none sent"


@pytest.fixture(scope="session")
def no_system_gguf():
    """The default model with a template that rejects the system role and opens <think>
    (built once into the user cache, about 250 MB)."""
    return templated_gguf(template=NO_SYSTEM_THINKING_TEMPLATE)


@pytest.mark.parametrize("mode", MODES)
def test_llama_cpp_folds_the_system_text_and_drops_unclosed_reasoning(
    chat_toy, no_system_gguf, mode,
):  # fmt: skip
    """In process: the GGUF's template rejects the system role and opens <think>; the
    run folds the system text into the user turn (no Jinja error per item), and the base
    model, which never closes the block, answers empty on every item."""
    path = chat_toy.path / "llama.json"
    result = chat_toy.runpytest_subprocess(
        "--model", str(no_system_gguf), "--chat", "on", "--data-dir", "data",
        "--report-json", str(path), "--no-cache", "-k", "d0 and (applicant or weight)", *GATE,
        *mode,
    )  # fmt: skip
    assert result.ret == 1, result.stdout.str()  # every answer empty: accuracy 0
    no_traceback(result)
    record = read_json(path)
    assert record["counts"]["scored"] == 2 and record["chat"]["answers"] == 2
    chat = record["model"]["chat"]
    assert chat["system_role"] == "folded into the user message" and chat["opens_think"]
    messages = record["chat"]["examples"]["toy"]["messages"]
    assert [m["role"] for m in messages] == ["user"]
    assert messages[0]["content"].startswith(INSTRUCTION)
    assert record["chat"]["rules"]["think"] == 2
    assert record["aggregates"]["toy/length"]["mean"] == 0.0


# ------------------------------------------------------------------ the check itself

MISTRAL_STYLE = (
    "{% for m in messages %}{% if (m['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    "{% endif %}[INST] {{ m['content'] }} [/INST]{% endfor %}"
)
DROPS_SYSTEM = "{% for m in messages if m['role'] != 'system' %}{{ m['content'] }}{% endfor %}"
QWEN3_NO_THINKING = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n\n</think>\n\n"
    "{% endif %}"
)


@pytest.mark.parametrize(
    ("template", "rejected", "opens"),
    [
        (GEMMA_STYLE_TEMPLATE, None, False),
        (NO_SYSTEM_THINKING_TEMPLATE, "System role not supported", True),
        (MISTRAL_STYLE, "Conversation roles must alternate user/assistant/user/assistant/...",
         False),
        (DROPS_SYSTEM, "it renders no system text", False),
        (QWEN3_NO_THINKING, None, False),
    ],
    ids=["gemma3", "gemma2-r1", "mistral", "drops-system", "qwen3-no-thinking"],
)  # fmt: skip
def test_the_template_check_finds_what_a_call_can_send(template, rejected, opens):
    from extractbench.fixtures.models.chat_probe import check_template
    from extractbench.fixtures.models.gguf import renderer

    check = check_template(renderer(None, template), "m.gguf")
    assert (check.system_rejected, check.opens_think) == (rejected, opens)


def test_a_template_that_drops_the_user_text_is_a_usage_error():
    from extractbench.fixtures.models.chat_probe import check_template
    from extractbench.fixtures.models.gguf import renderer
    from extractbench.suites.model_files import ModelFileError

    with pytest.raises(ModelFileError, match="renders a user message without its text"):
        check_template(renderer(None, "{{ 'hello' }}"), "m.gguf")


@pytest.mark.slow
def test_hf_folds_the_system_text_as_llama_cpp_does(chat_toy, no_system_gguf):
    """transformers renders the same template (checked with its own Jinja environment):
    the system text begins the user turn, and no item fails on the template."""
    require_installed("transformers", "torch")
    path = chat_toy.path / "hf.json"
    result = chat_toy.runpytest_subprocess(
        "--backend", "hf", "--model", str(no_system_gguf), "--chat", "on", "--data-dir",
        "data", "--report-json", str(path), "--no-cache", "-k", "d0 and applicant", *GATE,
    )  # fmt: skip
    assert result.ret == 1, result.stdout.str()  # the base model never closes <think>
    no_traceback(result)
    record = read_json(path)
    assert record["counts"]["scored"] == 1 and record["chat"]["rules"]["think"] == 1
    chat = record["model"]["chat"]
    assert chat["system_role"] == "folded into the user message" and chat["opens_think"]
