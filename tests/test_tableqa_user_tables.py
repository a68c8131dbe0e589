"""Table QA on a user's own tables (``tableqa.tables=DIR``): the article's lookup questions
drawn from the user's CSV and HTML tables; a bad folder or table is one line and exit 4
before any model call."""

from __future__ import annotations

import csv
import json
import random

import pytest

NODE = "extractbench.suites.tableqa"


def _tables(pytester: pytest.Pytester) -> None:
    rng = random.Random(5)
    (pytester.path / "tables").mkdir()
    for k in range(3):
        with open(pytester.path / "tables" / f"t{k}.csv", "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["name", "city", "age", "score"])
            for i in range(12):
                writer.writerow([f"Person{k}{i}", rng.choice(["Oslo", "Rome", "Lima"]),
                                 str(20 + i), str(rng.randint(1, 99))])  # fmt: skip
    rows = "".join(f"<tr><td>C{i}</td><td>Item {i}</td></tr>" for i in range(6))
    (pytester.path / "tables" / "codes.html").write_text(
        f"<table><tr><th>code</th><th>product</th></tr>{rows}</table>"
    )


def _run(pytester: pytest.Pytester, tables: str = "tables", *extra: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--pyargs", NODE, "--backend", "fake", "--suite-option", f"tableqa.tables={tables}",
        "--suite-option", "tableqa.per_cell=2", *extra,
    )  # fmt: skip


@pytest.mark.parametrize("mode", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_questions_come_from_the_user_s_tables_without_a_data_folder(pytester, monkeypatch, mode):
    monkeypatch.delenv("EXTRACTBENCH_DATA", raising=False)
    _tables(pytester)
    result = _run(pytester, "tables", *mode)
    assert result.ret == 0, result.stdout.str()[-2000:]
    (path,) = (pytester.path / "reports").glob("*.json")
    record = json.loads(path.read_text())
    tables = {it["meta"]["table"] for it in record["items"]}
    assert tables and tables <= {"t0", "t1", "t2", "codes"} and "codes" in tables
    assert {it["meta"]["subset"] for it in record["items"]} == {"user"}
    note = record["suites"]["tableqa"]["notes"]["user_tables"]
    assert note["files"] == 4 and len(note["sha256"]) == 64
    assert set(record["suites"]) == {"tableqa"}  # the package names one suite
    drawn = {p.name.split("-tableqa-")[-1] for p in (pytester.path / "reports").rglob("*.png")}
    assert {"user-w_r.png", "user-w_d.png"} <= drawn  # the user subset's heatmaps


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("nowhere", None, "tableqa.tables=nowhere: no such folder"),
        ("empty", {}, "tableqa.tables=empty: no .csv or .html table in it"),
        ("ragged", {"a.csv": b"x,y\n1,2\n3\n"}, "a.csv:3: 1 cells, the header has 2"),
        ("blank", {"a.csv": b"\n\n"}, "a.csv: empty"),
        ("latin1", {"a.csv": b"x,y\ncaf\xe9,2\n"}, "a.csv: not UTF-8"),
        ("tiny", {"a.csv": b"x\n1\n"}, "no question"),
        (
            "twins",
            {"t.csv": b"x,y\n1,2\n", "t.html": b"<table><tr><td>1</td></tr></table>"},
            "tableqa.tables=twins: t.csv and t.html both become the id 't'; rename one",
        ),
    ],
    ids=["no folder", "no table", "ragged row", "empty file", "not UTF-8", "no question", "one id"],
)
def test_a_bad_tables_folder_is_one_line_and_exit_4(pytester, name, content, message):
    if content is not None:
        (pytester.path / name).mkdir()
        for file, data in content.items():
            (pytester.path / name / file).write_bytes(data)
    result = _run(pytester, name)
    assert result.ret == 4
    assert message in result.stdout.str() + result.stderr.str()


def test_a_table_linked_from_outside_the_folder_is_refused_unless_a_root_allows_it(pytester):
    _tables(pytester)
    outside = pytester.path / "elsewhere.csv"
    outside.write_text("x,y\n1,2\n")
    (pytester.path / "tables" / "linked.csv").symlink_to(outside)
    result = _run(pytester)
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, text[-2000:]
    assert "tableqa.tables=tables: 'linked.csv' is outside" in text and "tableqa.root=DIR" in text
    result = _run(pytester, "tables", f"--suite-option=tableqa.root={pytester.path}")
    assert result.ret == 0, result.stdout.str()[-2000:]
