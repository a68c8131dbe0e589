"""MINEA, faithful round 3: whole-word ``ns``, needles that cannot be confused with each
other, the needle-free control and the judge that is not the model under test."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from itertools import combinations
from pathlib import Path

import pytest

from extractbench.fixtures.models.fake.backend import ScriptedBackend
from extractbench.suites.item import DataError, Item
from extractbench.suites.minea.collisions import check_infusion, select_needles, shared_keywords
from extractbench.suites.minea.document import evaluate_document
from extractbench.suites.minea.infusion import infuse
from extractbench.suites.minea.items import load_items
from extractbench.suites.minea.matching import match_needle
from extractbench.suites.minea.names import name_key, normalise
from extractbench.suites.minea.needlegen import template_needles
from extractbench.suites.minea.needles import Needle
from extractbench.suites.minea.schema import load_schema
from extractbench.suites.minea.scoring import criteria_table, minea_scores
from extractbench.suites.minea.suite import SUITE, MineaOptions, judge_for
from extractbench.suites.protocol import Models

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_data = pytest.mark.skipif(
    not (DATA / "minea" / "haystacks_manifest.jsonl").is_file(), reason="no ../shared/data/minea"
)


def needle(name: str, keywords: Sequence[str] = ("k1", "k2"), kind: str = "Country") -> Needle:
    return Needle(f"{kind}-{name}", kind, name, "d", tuple(keywords), f"{name} is here.")


# ------------------------------------------------------------------ ns and n


def test_ns_needs_the_whole_name_india_is_not_in_indiana():
    india = needle("India")
    assert match_needle(india, [{"name": "Indiana", "description": "a US state"}])["ns"] == 0
    assert match_needle(india, [{"name": "Indianapolis Labs"}])["ns"] == 0
    assert match_needle(india, [{"name": "X", "description": "sold in India, mostly"}])["ns"] == 1
    assert match_needle(india, [{"name": "X", "description": "India's regulator"}])["ns"] == 1


def test_n_and_ns_share_one_normalisation_of_case_punctuation_and_titles():
    person = needle("Dr. Jane O'Neil-Smith", kind="Person")
    assert name_key(person.name) == "jane o neil smith"
    assert name_key("Prof. Jane O'Neil Smith, PhD") == "jane o neil smith"
    assert name_key("Dr.") == "dr"  # a title alone is kept: something must be left
    hits = match_needle(person, [{"name": "JANE O’NEIL SMITH Jr.", "keywords": []}])
    assert hits["n"] == 1 and hits["ns"] == 1
    hits = match_needle(person, [{"name": "x", "description": "led by jane o'neil-smith"}])
    assert hits["n"] == 0 and hits["ns"] == 1


def test_two_keywords_never_join_into_a_name():
    graph = needle("Graph Index", ("graph", "index"), "Product")
    assert match_needle(graph, [{"name": "GRIX", "keywords": ["graph", "index"]}])["ns"] == 0
    assert normalise(' "AI  Clan-Meeting." ') == "ai clan meeting"


def test_keywords_match_whole_keywords_after_normalisation_as_the_docs_say():
    solar = needle("Helios", ("solar", "Panel", "grid", "x4"), "Product")
    entity = {"name": "H", "keywords": ["solar panel", "PANEL.", "Grid"], "description": "solar"}
    hits = match_needle(solar, [entity])
    # "panel" and "grid" equal entity keywords after normalisation: 2 of 4; "solar" is only
    # part of the keyword "solar panel" and a word of the description, which do not count
    assert (hits["k0.5"], hits["k0.6"]) == (1, 0)
    assert match_needle(solar, [{"name": "H", "keywords": ["solar panel grid x4"]}])["k0.5"] == 0


# ------------------------------------------------------------------ needles of one document


def test_select_needles_keeps_keywords_distinct_and_names_new():
    a = needle("Alpha Corp", ("x1", "x2", "x3"), "Organization")
    b = needle("Beta Corp", ("X1", "x2.", "y3"), "Organization")  # 2 shared after normalising
    c = needle("Gamma Corp", ("x1", "z2", "z3"), "Organization")  # 1 shared: allowed
    d = needle("Known Corp", ("q1",), "Organization")  # its name is in the haystack
    e = Needle("Person-e", "Person", "Gamma", "d", ("p",), "Gamma is a person.")  # in c
    kept, skipped = select_needles("We met Known Corp.\n\nNothing else.", [a, b, c, d, e])
    assert kept == [a, c]
    assert skipped == {"shared_keywords": 1, "name_in_document": 1, "name_in_other_needle": 1}
    assert check_infusion("haystack", kept) == {"shared_keyword_pairs": 0, "name_collisions": 0}
    assert check_infusion("Known Corp", [a, b, d]) == {
        "shared_keyword_pairs": 1, "name_collisions": 1
    }  # fmt: skip


def test_a_document_with_conflicting_needles_fails_with_the_counts():
    item = Item("minea/D", "minea/D", "text", "", "",
                {"conflicts": {"shared_keyword_pairs": 2, "name_collisions": 1}})  # fmt: skip
    model = ScriptedBackend(lambda prompt: "[]")
    with pytest.raises(DataError, match="2 pair.s. share more than one keyword, 1 name.s. occur"):
        SUITE.run(item, Models(model, model), MineaOptions())
    assert not model.prompts  # nothing was extracted


def test_template_needles_of_one_type_rarely_share_keywords():
    needles = template_needles(load_schema(), 50, 0)
    pairs = [(a, b) for a, b in combinations(needles, 2) if a.type == b.type]
    shared = [shared_keywords(a, b) for a, b in pairs]
    assert sum(s > 1 for s in shared) / len(shared) < 0.1  # version 1: every pair shared 3-4


@needs_data
def test_in_the_default_run_no_needle_satisfies_k05_for_another_of_its_document():
    """The issue measured 184 of 208 same-type pairs of one document satisfying k0.5 for
    each other with the version-1 templates; now no pair of any types does."""
    items = load_items(DATA).items
    pairs = same_type = 0
    for item in items:
        placed = [Needle.from_json(n) for n in item.meta["needles"]]
        assert item.meta["conflicts"] == {"shared_keyword_pairs": 0, "name_collisions": 0}
        for a, b in combinations(placed, 2):
            as_entity = {"name": b.name, "keywords": list(b.keywords)}
            pairs += match_needle(a, [as_entity])["k0.5"]
            same_type += a.type == b.type
    assert pairs == 0 and same_type > 50


# ------------------------------------------------------------------ the control


def _piece(prompt: str) -> str:
    text = prompt.split("Text:\n", 1)[1]
    return text.split("\nAlready extracted:", 1)[0].split("\nEntities (JSON", 1)[0]


def _entities(needles: Sequence[Needle]) -> str:
    return json.dumps(
        [{"type": n.type, "name": n.name, "description": n.description,
          "keywords": list(n.keywords)} for n in needles]
    )  # fmt: skip


def honest(needles: Sequence[Needle]) -> Callable[[str], str]:
    """Extracts a needle when its paragraph is in the piece."""
    return lambda prompt: _entities([n for n in needles if n.paragraph in _piece(prompt)])


def hallucinating(needles: Sequence[Needle]) -> Callable[[str], str]:
    """Answers every needle whatever the text: what the control must catch."""
    return lambda prompt: _entities(needles)


HAYSTACK = "\n\n".join(f"Paragraph {i} about a device for serum tests." for i in range(30))
OPTIONS = MineaOptions(iterations=0, judge="off")


def document(infused: bool) -> tuple[Item, list[Needle]]:
    needles = template_needles(load_schema(), 1, 5)[:4]
    result = infuse(HAYSTACK, needles, random.Random(0), 0.05, 0.5)
    placed = {p.needle_id for p in result.placements}
    needles = [n for n in needles if n.id in placed]
    meta = {
        "needles": [n.to_json() for n in needles],
        "placements": [[p.needle_id, p.start, p.end] for p in result.placements] if infused else [],
    }
    return Item("minea/D", "minea/D", result.text if infused else HAYSTACK, "", "", meta), needles


def test_a_needle_free_document_finds_no_needle_whatever_the_model_answers():
    item, needles = document(infused=False)
    result = evaluate_document(
        item, ScriptedBackend(hallucinating(needles)), None, load_schema(), OPTIONS, "tfidf"
    )
    assert result.scores["ns"] == result.scores["k0.5"] == 1.0  # every criterion "hits"
    assert result.scores["control_ns"] == result.scores["control_k0.5"] == 1.0
    assert result.scores["score"] == result.scores["score_no_llm"] == 0.0
    off = evaluate_document(item, ScriptedBackend(hallucinating(needles)), None, load_schema(),
                            OPTIONS.model_copy(update={"control": False}), "tfidf")  # fmt: skip
    assert off.scores["score"] == 1.0 and off.scores["control_ns"] is None  # the paper's rule


def test_the_control_keeps_what_only_the_enriched_document_gives():
    item, needles = document(infused=True)
    model = ScriptedBackend(honest(needles))
    result = evaluate_document(item, model, None, load_schema(), OPTIONS, "tfidf")
    assert len(needles) >= 2 and result.scores["n"] == result.scores["score"] == 1.0
    assert result.scores["control_n"] == 0.0 and result.facts["control"]["entities"] == 0
    assert sum("Paragraph 0 about" in p for p in model.prompts) == 2  # enriched and control
    assert all(set(row["control"]) == set(row["hits"]) for row in result.needles)


def test_criteria_over_the_control_threshold_are_left_out_of_the_type():
    rows = [
        {"type": "Insight", "hits": {"n": 0, "ns": 1, "k0.5": 1, "k0.6": 1, "k0.7": 0, "llm": None},
         "control": {"n": 0, "ns": 0, "k0.5": int(i < 2), "k0.6": 0, "k0.7": 0, "llm": None}}
        for i in range(20)
    ]  # fmt: skip
    for row in rows[:10]:
        row["hits"]["ns"] = 0
    table = criteria_table(rows)
    assert table["Insight"]["k0.5"]["control"] == 0.1 and table["Insight"]["k0.5"]["found"] == 0.9
    scores = minea_scores(table)
    assert scores["per_type"]["Insight"] == {
        "minea": 1.0, "criterion": "k0.6", "needles": 20, "excluded": ["k0.5"]
    }  # fmt: skip
    loose = minea_scores(table, max_control_fp=0.1)["per_type"]["Insight"]
    assert loose["minea"] == 1.0 and loose["excluded"] == []
    everything = {**rows[0]["control"], "n": 1, "ns": 1, "k0.6": 1, "k0.7": 1, "k0.5": 1}
    strict = criteria_table([{**r, "control": everything} for r in rows])
    assert minea_scores(strict)["per_type"]["Insight"]["criterion"] is None
    assert minea_scores(strict)["overall"] == 0.0


# ------------------------------------------------------------------ the judge


def test_the_judge_is_never_the_model_under_test_unless_asked():
    model, other = ScriptedBackend(str), ScriptedBackend(str)
    assert judge_for("auto", Models(model, model)) == (None, "none")
    assert judge_for("auto", Models(model, other)) == (other, "separate")
    assert judge_for("self", Models(model, model)) == (model, "self")
    assert judge_for("self", Models(model, other)) == (other, "separate")
    assert judge_for("off", Models(model, other)) == (None, "none")
    with pytest.raises(DataError, match="minea.judge=true: must be one of auto, self, off"):
        SUITE.parse_options({"judge": "true"})
    assert SUITE.parse_options({"judge": "self"}).judge == "self"
