"""Struc-Bench on a user's own (text, table) pairs (``strucbench.pairs=FILE``): items built and
scored as the suite's own, no data folder needed; each bad line is one ``file:line`` error
and exit 4 before any model call."""

from __future__ import annotations

import json

import pytest

RAW = {"text": "Acme sold 5 units in May and 7 in June.", "format": "raw",
       "table": "| month | units |\n|---|---|\n| May | 5 |\n| June | 7 |"}  # fmt: skip
HTML = {"text": "Oslo has 700k people, Rome 2.8M.", "format": "html", "id": "cities",
        "table": "<table><tr><th>city</th><th>people</th></tr><tr><td>Oslo</td><td>700k</td>"
                 "</tr><tr><td>Rome</td><td>2.8M</td></tr></table>"}  # fmt: skip
LATEX = {"text": "Model A scores 81.2, model B 79.5.", "format": "latex",
         "table": "\\begin{table}\\centering\\caption{Scores}\\begin{tabular}{lr}\\hline Model & "
                  "Score \\\\ \\hline A & 81.2 \\\\ B & 79.5 \\\\ \\hline\\end{tabular}\\end{table}"}  # fmt: skip


def _run(pytester: pytest.Pytester, rows: list[dict]) -> pytest.RunResult:
    (pytester.path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return pytester.runpytest_subprocess(
        "--pyargs", "extractbench.suites.strucbench", "--backend", "fake",
        "--suite-option", "strucbench.pairs=pairs.jsonl", "--suite-option", "strucbench.pscore=false",
        "--suite-option", "strucbench.bertscore=off",
    )  # fmt: skip


def test_the_user_s_pairs_are_the_items_in_all_three_formats(pytester, monkeypatch):
    monkeypatch.delenv("EXTRACTBENCH_DATA", raising=False)
    result = _run(pytester, [RAW, HTML, LATEX])
    assert result.ret == 0, result.stdout.str()[-2000:]
    (path,) = (pytester.path / "reports").glob("*.json")
    record = json.loads(path.read_text())
    ids = sorted(it["id"] for it in record["items"])
    assert ids == ["strucbench/html/user/cities", "strucbench/latex/user/line3",
                   "strucbench/raw/user/line1"]  # fmt: skip
    assert {"strucbench/raw/h_content", "strucbench/html/h_structure"} <= set(record["aggregates"])
    note = record["suites"]["strucbench"]["notes"]["data"]
    assert note["rows"] == 3 and len(note["sha256"]) == 64


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"text": "t", "format": "raw"}, "pairs.jsonl:2: missing field(s) table"),
        ({**RAW, "format": "csv"}, "pairs.jsonl:2: format 'csv': must be one of raw, html, latex"),
        ({**RAW, "table": "no table here"}, "pairs.jsonl:2: table is not a raw table"),
        ({**RAW, "text": 5}, "pairs.jsonl:2: text must be a non-empty string"),
        ({**HTML}, "pairs.jsonl:2: duplicate id 'cities' (line 1)"),
    ],
    ids=["missing field", "unknown format", "not a table", "wrong type", "duplicate id"],
)
def test_a_bad_pair_is_one_line_and_exit_4(pytester, bad, message):
    result = _run(pytester, [HTML, bad])
    assert result.ret == 4
    assert message in result.stdout.str() + result.stderr.str()


def test_an_empty_pairs_file_is_exit_4(pytester):
    result = _run(pytester, [])
    assert result.ret == 4
    assert "pairs.jsonl: no items" in result.stdout.str() + result.stderr.str()
