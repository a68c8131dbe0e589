"""Chat and instruct models, without a model run: the system-role contract, the
messages, --chat decided per backend, the cache keys, the wrapper that finishes chat
answers the same way for every backend, and the chat template's shared prefix."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace

import pytest

from extractbench.fixtures.models import ModelSpec, resolve_model_spec
from extractbench.fixtures.models.cache import GenerationCache, generation_key
from extractbench.fixtures.models.chat import ChatSetup, chat_facts, parse_system_prompt
from extractbench.fixtures.models.fake.backend import ScriptedBackend
from extractbench.fixtures.models.llama_cpp.gpu import supports_gpu_offload
from extractbench.fixtures.models.routing import routing
from extractbench.fixtures.models.wrappers import CachingBackend, ReplayBackend, recording_calls
from extractbench.suites.item import Item
from extractbench.suites.model import Generation, ModelError, ModelInfo, chat_messages, user_message
from extractbench.suites.model_files import ModelFileError
from extractbench.suites.protocol import generate
from tests.chat_gguf import templated_gguf

SYSTEM = "You are an expert. Answer using ONLY the table."
TABLE = "| a | b |\n|---|---|\n| 1 | 2 |"


def tableqa_prompt(question: str) -> str:
    return f"{SYSTEM}\n\n-----\n\n{TABLE}\n\n-----\n\n{question}"


@pytest.fixture(scope="session")
def chat_gguf():
    return templated_gguf()


# ------------------------------------------------------------------ the system-role contract


def test_the_user_message_is_the_prompt_without_its_system_text_and_separator():
    assert (
        user_message(tableqa_prompt("b if a is 1?"), SYSTEM) == f"{TABLE}\n\n-----\n\nb if a is 1?"
    )
    assert user_message("Instruction.\n\nText:\nx\n", "Instruction.") == "Text:\nx\n"
    assert user_message("doc\nkey:", None) == "doc\nkey:"  # FDA: no system text
    assert user_message("doc\nkey:", "") == "doc\nkey:"


def test_a_prompt_that_does_not_begin_with_its_system_text_fails_in_one_line():
    with pytest.raises(ModelError) as caught:
        user_message("Another beginning\n\nQ?", SYSTEM)
    assert "\n" not in str(caught.value) and "Item.system" in str(caught.value)


def test_system_prompt_replaces_or_drops_the_system_message():
    prompt = tableqa_prompt("Q?")
    user = {"role": "user", "content": f"{TABLE}\n\n-----\n\nQ?"}
    assert chat_messages(prompt, SYSTEM) == [{"role": "system", "content": SYSTEM}, user]
    assert chat_messages(prompt, SYSTEM, "Be brief.") == [
        {"role": "system", "content": "Be brief."}, user,
    ]  # fmt: skip
    assert chat_messages(prompt, SYSTEM, parse_system_prompt("none")) == [user]
    assert chat_messages("doc\nkey:", None, "Be brief.")[0]["content"] == "Be brief."
    assert parse_system_prompt(None) is None and parse_system_prompt("NONE") == ""


def suite_prompts() -> dict[str, tuple[str, str]]:
    """(completion prompt, system text) of each suite that states a system role."""
    from extractbench.suites.minea import extraction, matching
    from extractbench.suites.strucbench import prompts as strucbench
    from extractbench.suites.tableqa import prompts as tableqa

    return {
        "tableqa": (tableqa.build_prompt("|a|", "Q?"), tableqa.SYSTEM_PROMPTS["en"]),
        "tableqa-ru": (tableqa.build_prompt("|a|", "Q?", "ru"), tableqa.SYSTEM_PROMPTS["ru"]),
        **{
            f"strucbench-{fmt}": (
                strucbench.build_prompt(fmt, "t", "f"),
                strucbench.instruction(fmt),
            )
            for fmt in ("raw", "html", "latex")
        },
        "minea-extraction": (
            extraction.PROMPT.format(schema="S", piece="P"),
            extraction.INSTRUCTION.format(schema="S"),
        ),
        "minea-judge": (matching.JUDGE_TEMPLATE, matching.JUDGE_INSTRUCTION),
    }


@pytest.mark.parametrize(
    "name",
    ["tableqa", "tableqa-ru", "strucbench-raw", "strucbench-html", "strucbench-latex",
     "minea-extraction", "minea-judge"],
)  # fmt: skip
def test_each_suite_begins_its_completion_prompt_with_its_system_text(name):
    prompt, system = suite_prompts()[name]
    assert prompt.startswith(system) and user_message(prompt, system).strip()
    assert not user_message(prompt, system).startswith(("\n", "-"))


# ------------------------------------------------------------------ the cache keys


def test_completion_keys_stay_and_a_chat_key_holds_the_system_text():
    old = hashlib.sha256(
        json.dumps(["fp", "p", 8, ["\n"], None], ensure_ascii=False).encode()
    ).hexdigest()
    assert generation_key("fp", "p", 8, ["\n"], None) == old
    assert generation_key("fp", "p", 8, ["\n"], None, "sys") != old


def test_chat_decided_per_model_and_in_the_fingerprint(chat_gguf):
    base = resolve_model_spec("llama-cpp", None, 0, 1, chat="auto")
    assert not base.chat and base.chat_setup.reason == "auto: the model has no chat template"
    # the key of cached completions; ":repack=off" on a CPU whose AMX llama.cpp must avoid
    completion = f"llama-cpp:{base.info().sha256}:seed=0{base.settled_tag}"
    # (a CUDA build tags its offload settings after it: fixtures.models.llama_cpp.gpu)
    cpu = not supports_gpu_offload()
    assert base.fingerprint() == completion if cpu else base.fingerprint().startswith(completion)
    on = resolve_model_spec("llama-cpp", str(chat_gguf), 0, 1, chat="auto")
    assert on.chat and on.describe()["chat"]["template_source"] == "GGUF tokenizer.chat_template"
    sha = on.chat_setup.template.sha256
    assert on.fingerprint().endswith(f":seed=0{on.settled_tag}:chat=True:template={sha[:16]}")
    off = resolve_model_spec("llama-cpp", str(chat_gguf), 0, 1, chat="off")
    plain, got = f"llama-cpp:{off.info().sha256}:seed=0{off.settled_tag}", off.fingerprint()
    assert not off.chat and ":chat=" not in got
    assert got == plain if cpu else got.startswith(plain)
    brief = resolve_model_spec("llama-cpp", str(chat_gguf), 0, 1, chat="on", system_prompt="X")
    none = resolve_model_spec("llama-cpp", str(chat_gguf), 0, 1, chat="on", system_prompt="")
    assert len({on.fingerprint(), brief.fingerprint(), none.fingerprint()}) == 3


@pytest.mark.parametrize(
    ("backend", "model", "kwargs", "says"),
    [
        ("llama-cpp", None, {"chat": "on"}, "has no chat template"),
        ("fake", None, {"chat": "on"}, "has no chat mode"),
        ("fake", None, {"chat": "auto", "system_prompt": "X"}, "--system-prompt"),
        ("fake", None, {"chat": "sometimes"}, "--chat sometimes"),
    ],
)
def test_chat_that_cannot_work_is_one_usage_line(backend, model, kwargs, says):
    with pytest.raises(ModelFileError) as caught:
        resolve_model_spec(backend, model, 0, 1, **kwargs)
    assert says in str(caught.value) and "\n" not in str(caught.value)


# ------------------------------------------------------------------ one wrapper, every backend


ANSWER = "\nAnswer: 2\nmore text"  # a chat answer: a newline, the cue restated, then more


def chatty(answer: str = ANSWER) -> ScriptedBackend:
    """A chat backend double answering ``answer`` to every prompt (what it was asked is in
    its ``asked``)."""
    return ScriptedBackend(lambda prompt: answer, latency_s=0.1)


class OldStyle:
    """A completion backend written before ``system`` existed."""

    def generate(self, prompt, *, max_tokens, stop=(), grammar=None):
        return Generation(" 2", 10, 1, 0.1)


def chat_backend(inner, cache=None, **kwargs):
    info = ModelInfo("m", "test", "", "")
    return CachingBackend(info, "fp:chat", lambda: inner, cache, chat=True, **kwargs)


def test_chat_answers_are_finished_by_the_rules_and_the_raw_answer_is_cached(tmp_path):
    inner, cache = chatty(), GenerationCache(tmp_path)
    model = chat_backend(inner, cache, shows=frozenset({"g"}))
    calls: list[dict] = []
    with recording_calls(calls), routing("g"):
        first = model.generate(tableqa_prompt("Q?"), max_tokens=8, stop=("\n",), system=SYSTEM)
        again = model.generate(tableqa_prompt("Q?"), max_tokens=8, stop=("\n",), system=SYSTEM)
    assert first.text == again.text == "2"  # the newline first, then "Answer:", then the stop
    assert inner.asked == [
        {"prompt": tableqa_prompt("Q?"), "stop": (), "grammar": None, "system": SYSTEM}
    ]
    assert [c["answer_rules"] for c in calls] == [["cue"]] * 2  # the cue took the space too
    assert calls[0]["text"] == ANSWER and calls[1]["cached"]  # raw in log and cache
    assert calls[0]["messages"][0] == {"role": "system", "content": SYSTEM}
    assert "messages" not in calls[1]  # shown once per suite's first group
    key = generation_key("fp:chat", tableqa_prompt("Q?"), 8, ("\n",), None, SYSTEM)
    assert cache.get(key).text == ANSWER
    replayed_calls: list[dict] = []
    replay = ReplayBackend(ModelInfo("m", "test", "", ""), "fp:chat", calls, chat=True)
    with recording_calls(replayed_calls):
        assert replay.generate(
            tableqa_prompt("Q?"), max_tokens=8, stop=("\n",), system=SYSTEM
        ).text == "2"  # fmt: skip
    assert replayed_calls[0]["answer_rules"] == ["cue"]
    with pytest.raises(ModelError, match="Item.system"):
        model.generate("Q?", max_tokens=8, system=SYSTEM)  # even where the answer is cached


def test_completion_calls_keep_their_keys_and_reach_old_backends_without_system(tmp_path):
    cache = GenerationCache(tmp_path)
    info = ModelInfo("m", "test", "", "")
    model = CachingBackend(info, "fp", OldStyle, cache)
    out = model.generate(tableqa_prompt("Q?"), max_tokens=8, stop=("\n",), system=SYSTEM)
    assert out.text == " 2"  # completion answers are scored as generated
    assert cache.get(generation_key("fp", tableqa_prompt("Q?"), 8, ("\n",), None)) is not None


def test_a_prompt_without_a_cue_answers_after_a_leading_newline():
    """Table QA's article-exact prompt (answer_cue=""): the newline stop applies after the
    first non-space character, in completion mode too; FDA's items keep theirs."""
    item = Item("tableqa/x", "g", tableqa_prompt(""), "What is b?", "2", stop=("\n",),
                max_tokens=8, system=SYSTEM, stop_after_content=True)  # fmt: skip
    inner = chatty("\n2\nWhat is a?")
    model = CachingBackend(ModelInfo("m", "test", "", ""), "fp", lambda: inner, None)
    assert generate(item, model).text == "\n2"
    assert inner.asked[-1]["stop"] == () and inner.asked[-1]["system"] is None
    fda = replace(item, system="", stop_after_content=False)
    assert generate(fda, model).text == "\n2\nWhat is a?"  # the double only answers; FDA's stop
    assert inner.asked[-1]["stop"] == ("\n",)  # FDA's stop goes to the engine unchanged


def test_tableqa_items_carry_the_article_system_prompt_and_the_empty_cue_rule():
    from extractbench.suites.tableqa.items import _lookup_items
    from extractbench.suites.tableqa.prompts import SYSTEM_PROMPTS
    from extractbench.suites.tableqa.questions import Question
    from extractbench.suites.tableqa.subsets import SubsetQuestions
    from extractbench.suites.tableqa.suite import TableQAOptions
    from extractbench.suites.tableqa.tables import Table

    table = Table("t1", ("a", "b"), (("1", "2"), ("3", "4")))
    built = SubsetQuestions([table], [Question("t1", 1, 1, 0, "1", "2", 2)], {}, {}, None, None)
    for cue, lenient in (("\nAnswer:", False), ("", True)):
        opts = TableQAOptions(language="en", answer_cue=cue)
        (item,) = _lookup_items("wiki", built, opts)
        assert item.system == SYSTEM_PROMPTS["en"] and item.prompt.startswith(item.system)
        assert item.stop_after_content is lenient and item.request().stop == (
            () if lenient else ("\n",)
        )


def test_chat_facts_count_each_rule_and_keep_one_example_per_suite():
    items = [
        {"id": "s/2", "suite": "s", "calls": [{"answer_rules": ["cue"], "messages": ["late"]}]},
        {"id": "s/1", "suite": "s", "calls": [{"answer_rules": ["think", "whitespace"],
                                               "messages": ["early"]}]},
        {"id": "t/1", "suite": "t", "calls": [{"text": "x"}]},
    ]  # fmt: skip
    facts = chat_facts(items, [{"examples": {"t": {"item": "t/0", "prompt": "p"}}}])
    assert facts["answers"] == 2
    assert facts["rules"] == {"think": 1, "fence": 0, "cue": 1, "whitespace": 1}
    assert facts["examples"] == {
        "s": {"item": "s/1", "messages": ["early"]}, "t": {"item": "t/0", "prompt": "p"},
    }  # fmt: skip


def test_the_chat_setup_describes_itself_for_the_record():
    setup = ChatSetup("auto", False, None, "auto: the model has no chat template")
    assert setup.tag() == "" and setup.describe()["enabled"] is False
    spec = ModelSpec("fake", None, 0, 1, chat_setup=setup)
    assert spec.describe()["chat"]["reason"] == "auto: the model has no chat template"


# ------------------------------------------------------------------ the template's shared prefix


def test_the_rendered_template_keeps_the_table_before_the_question(chat_gguf):
    """llama.cpp reuses a group's KV cache up to the first differing token: the table
    (and the system prompt before it) must come first in the rendered messages."""
    from extractbench.fixtures.models.gguf import gguf_template
    from extractbench.fixtures.models.llama_cpp.chat import LlamaChat
    from extractbench.suites.gguf_vocab import vocabulary

    vocab = vocabulary(chat_gguf)
    chat = LlamaChat(vocab, gguf_template(chat_gguf).text)
    text, added_special, stops = chat.render(tableqa_prompt("b if a is 1?"), SYSTEM)
    assert text == (
        f"<bos><start_of_turn>user\n{SYSTEM}\n\n{TABLE}\n\n-----\n\nb if a is 1?<end_of_turn>\n"
        "<start_of_turn>model\n"
    )
    assert added_special and stops == ["<eos>"]
    one, _ = chat.tokens(tableqa_prompt("b if a is 1?"), SYSTEM)
    two, _ = chat.tokens(tableqa_prompt("a if b is 4?"), SYSTEM)
    assert one.count(vocab.token_bos()) == 1  # the template writes BOS; none added
    shared = next(i for i, (a, b) in enumerate(zip(one, two, strict=False)) if a != b)
    upto = text[: text.index(TABLE) + len(TABLE)].encode()
    assert shared >= len(vocab.tokenize(upto, add_bos=False, special=True))
