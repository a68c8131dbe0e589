"""Greedy decoding under a grammar with the best tokens checked first gives the same tokens
as llama-cpp-python's whole-vocabulary check (fixtures/models/llama_cpp/grammar.py), on the
default model: where the model's best token is allowed, where one of its best few is, and
where none of them is."""

from __future__ import annotations

import pytest

from extractbench.fixtures.models.llama_cpp.backend import LlamaCppBackend
from extractbench.suites.minea.extraction import ENTITY_GRAMMAR, FIRST_CUE, PROMPT
from extractbench.suites.model_files import default_model_path

# MINEA's grammar with at least one entity, so the answer is long enough to compare
SOME_ENTITY = ENTITY_GRAMMAR.replace(
    'root ::= "[" ws (entity ("," ws entity){0,7})? ws "]"',
    'root ::= "[" ws entity ("," ws entity){0,7} ws "]"',
)
DIGITS = 'root ::= [0-9]+ "." [0-9]+'  # the model's best token is rarely a digit here
RARE = 'root ::= "ǂ" [0-9]'  # a click letter: none of the model's best few tokens here
TEXT = (
    "Dr. Alice Smith, chief scientist of Acme Diagnostics in Oslo, met the Norwegian Medicines "
    "Agency about the Zenvia sodium assay; the agency cleared it in March 2021."
)


@pytest.fixture(scope="module")
def pair():
    path = default_model_path()
    fast = LlamaCppBackend(path, n_ctx=1024, n_threads=1)
    slow = LlamaCppBackend(path, n_ctx=1024, n_threads=1, grammar_best_first=False)
    return fast, slow


def test_the_grammar_is_the_same_whichever_token_is_checked_first(pair):
    fast, slow = pair
    assert SOME_ENTITY != ENTITY_GRAMMAR and fast.grammar_steps is not None
    assert slow.grammar_steps is None
    cases = [
        (PROMPT.format(schema="Person: name, jobTitle\nOrganization: name", piece=TEXT)
         + FIRST_CUE, SOME_ENTITY, 48),
        ("The assay's result for sample 7, in mmol/L, was", DIGITS, 8),
        ("The assay's result for sample 7, in mmol/L, was", RARE, 4),
    ]  # fmt: skip
    for prompt, grammar, budget in cases:
        a = fast.generate(prompt, max_tokens=budget, grammar=grammar)
        b = slow.generate(prompt, max_tokens=budget, grammar=grammar)
        assert (a.text, a.completion_tokens) == (b.text, b.completion_tokens), prompt[-40:]
    # every way of deciding a step was taken: the best token allowed, one of the best few,
    # and the whole vocabulary
    taken = {how for how, n in fast.grammar_steps.items() if n > 0}
    assert taken == {"first", "top", "full"}, fast.grammar_steps


def test_free_decoding_keeps_llama_cpp_python_s_own_chain(pair):
    fast, _ = pair
    before = dict(fast.grammar_steps)
    fast.generate("One, two, three,", max_tokens=4)
    assert fast.grammar_steps == before
