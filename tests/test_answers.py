"""Answer parsing for chat outputs (suites/answers.py): each rule, their order, and the
stop strings that apply only after the first non-space character."""

from __future__ import annotations

import pytest
from extractbench.suites.answers import RULES, first_content_stop, parse_answer


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
