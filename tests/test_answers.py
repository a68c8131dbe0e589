"""Answer parsing for chat outputs (suites/answers.py): each rule, their order, and the
stop strings that apply only after the first non-space character; in completion mode the
``think`` rule alone."""

from __future__ import annotations

import json

import pytest

from extractbench.suites.answers import (
    RULES,
    finish_completion_answer,
    first_content_stop,
    parse_answer,
)
from tests.test_plugin import MODES, run


@pytest.mark.parametrize(
    ("text", "cues", "expected", "rules"),
    [
        ("Paris", (), "Paris", ()),
        ("\n  Paris \n", (), "Paris", ("whitespace",)),
        ("Answer: Paris", (), "Paris", ("cue",)),
        ("The answer is 42.5", (), "42.5", ("cue",)),
        ("**Final answer:** 7", (), "7", ("cue",)),
        ("applicant: Acme Corp", ("applicant:",), "Acme Corp", ("cue",)),
        ("Answering the question: no", (), "Answering the question: no", ()),
        ("The answer isn't in the table", (), "The answer isn't in the table", ()),
        ("<think>the table says 3</think>3", (), "3", ("think",)),
        ("<think>long reasoning cut by the budget", (), "", ("think",)),
        ('```json\n{"a": 1}\n```', (), '{"a": 1}', ("fence",)),
        ("Here it is:\n```latex\n\\begin{tabular}{c}x\\end{tabular}\n```\nDone.", (),
         "\\begin{tabular}{c}x\\end{tabular}", ("fence",)),
        ("<think>hm</think>\n```\nAnswer: |a|b|\n```", (), "|a|b|", ("think", "fence", "cue")),
    ],
)  # fmt: skip
def test_each_rule_changes_only_what_it_names(text, cues, expected, rules):
    parsed = parse_answer(text, cues)
    assert parsed.text == expected
    assert parsed.rules == rules
    assert set(parsed.rules) <= set(RULES)


@pytest.mark.parametrize(
    ("text", "opened", "expected", "rules"),
    [
        ("the key is on line 2</think>Acme", False, "Acme", ("think",)),
        ("reasoning</THINK>\n\nAcme", False, "Acme", ("think", "whitespace")),
        ("a</think>b</think> Acme", False, "Acme", ("think", "whitespace")),
        ("<think>a</think>b</think>Acme", False, "Acme", ("think",)),
        ("r</think>Acme<think>second thoughts", False, "Acme", ("think",)),
        ("reasoning</think>Acme", True, "Acme", ("think",)),
        ("reasoning spent the whole budget", True, "", ("think",)),
        ("<think>reasoning spent the budget", True, "", ("think",)),
        ("Acme", False, "Acme", ()),
    ],
)  # fmt: skip
def test_a_closing_think_tag_without_its_opening_drops_the_reasoning(text, opened, expected, rules):
    """A template that opens <think> in the prompt leaves only the closing tag in the
    reply; the reasoning before it is never scored, and a reply that never closes the
    block the prompt opened is reasoning only."""
    parsed = parse_answer(text, (), opened=opened)
    assert (parsed.text, parsed.rules) == (expected, rules)


def test_stop_strings_apply_after_the_first_non_space_character():
    assert first_content_stop("\nMoscow\nQ: next", ("\n",)) == "\nMoscow"
    assert first_content_stop("  42 rows\n", ("\n",)) == "  42 rows"
    assert first_content_stop("answer</s>rest\n", ("\n", "</s>")) == "answer"
    assert first_content_stop("\n\n", ("\n",)) == "\n\n"  # nothing but space: nothing to cut
    assert first_content_stop("plain", ()) == "plain"


@pytest.mark.parametrize(
    ("text", "expected", "rules"),
    [
        ("Let me reason: II</think>unknown", "unknown", ("think",)),
        ("<think>the value is II</think> II", " II", ("think",)),
        ("<think>the value is II", "", ("think",)),
        ("  Acme Corp", "  Acme Corp", ()),  # otherwise as generated: no other rule
        ("Answer: ```x```", "Answer: ```x```", ()),
    ],
)  # fmt: skip
def test_completion_answers_keep_only_the_think_rule(text, expected, rules):
    done = finish_completion_answer(text)
    assert (done.text, done.rules) == (expected, rules)


THINKING_ROWS = [
    {
        "doc": "d0",
        "key": "answer",
        "value": "II",
        "text": "answer: Let me reason: II</think>unknown",
    },
    {"doc": "d1", "key": "answer", "value": "IV", "text": "answer: IV"},
]


@pytest.mark.parametrize("mode", MODES)
def test_reasoning_before_a_closing_tag_is_not_scored_in_completion_mode(toy, mode):
    """A completion (no chat template: the fake backend) that reasons up to a lone
    ``</think>`` is scored on what follows it, and the record counts the rule."""
    (toy.path / "data" / "toy.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in THINKING_ROWS)
    )
    result, record = run(toy, mode, "--no-cache")
    assert result.ret == 0, result.stdout.str()[-2000:]
    scores = {it["id"]: it["scores"]["accuracy"] for it in record["items"]}
    assert scores == {"toy/d0/answer": 0.0, "toy/d1/answer": 1.0}
    [call] = next(it for it in record["items"] if it["id"] == "toy/d0/answer")["calls"]
    assert call["text"].strip() == "Let me reason: II</think>unknown" and call["answer_rules"] == [
        "think"
    ]
    assert record["chat"]["rules"]["think"] == 1
