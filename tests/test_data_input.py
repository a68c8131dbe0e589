"""Bad input data: one error naming the file (and line), nothing silently dropped or changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from extractbench.suites.item import DataError
from extractbench.suites.jsonl import iter_jsonl

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
WTQ = DATA / "tableqa" / "wtq" / "csv"
needs_data = pytest.mark.skipif(not WTQ.is_dir(), reason="../shared/data not present")


def test_a_non_utf8_line_names_file_line_and_byte(tmp_path):
    path = tmp_path / "labels.jsonl"
    first = b'{"a": "1"}\n'
    path.write_bytes(first + b'{"a": "caf\xe9"}\n')
    with pytest.raises(DataError, match=rf"labels.jsonl:2: not UTF-8 at byte {len(first) + 10}$"):
        list(iter_jsonl(path))


def test_a_duplicate_json_key_names_the_line(tmp_path):
    path = tmp_path / "labels.jsonl"
    path.write_text('{"a": "1"}\n{"value": "x", "value": "y"}\n')
    with pytest.raises(DataError, match=r"labels.jsonl:2: duplicate key 'value'"):
        list(iter_jsonl(path))


def _fda_data(tmp_path: Path, doc_file: str, doc: bytes = b"Applicant: Acme\n") -> Path:
    (tmp_path / "fda" / "docs").mkdir(parents=True)
    (tmp_path / "fda" / "docs" / "d1.md").write_bytes(doc)
    row = {"doc_id": "d1", "doc_file": doc_file, "key": "applicant", "value": "Acme"}
    (tmp_path / "fda" / "fda_kv_labels_derived.jsonl").write_text(json.dumps(row) + "\n")
    return tmp_path


@pytest.mark.parametrize("doc_file", ["/etc/passwd", "../../../etc/passwd", "../../outside.md"])
def test_a_label_cannot_read_outside_the_data_folder(tmp_path, doc_file):
    from extractbench.suites.fda.items import load_items

    data = _fda_data(tmp_path / "data", doc_file)
    with pytest.raises(
        DataError,
        match=r"fda_kv_labels_derived.jsonl:1: doc_file: path .* is outside the data folder",
    ):
        load_items(data)


def test_a_non_utf8_document_names_the_file_and_byte(tmp_path):
    from extractbench.suites.fda.items import load_items

    data = _fda_data(tmp_path, "docs/d1.md", b"Applicant: Acme \xff\n")
    with pytest.raises(DataError, match=r"docs/d1.md: not UTF-8 at byte 16$"):
        load_items(data)


def _wtq_copy(tmp_path: Path, n: int = 3) -> tuple[Path, list[Path]]:
    root = tmp_path / "tableqa" / "wtq" / "csv" / "200-csv"
    root.mkdir(parents=True)
    files = sorted((WTQ / "200-csv").glob("*.html"))[:n]
    for f in files:
        shutil.copy(f, root / f.name)
        shutil.copy(f.with_suffix(".csv"), root / f.with_suffix(".csv").name)
    return tmp_path, sorted(root.glob("*.html"))


@needs_data
def test_wiki_html_problems_name_the_file_or_are_counted(tmp_path):
    from extractbench.suites.tableqa.wiki import wiki_tables

    data, files = _wtq_copy(tmp_path)
    dropped: dict[str, list[str]] = {}
    assert len(wiki_tables(data, dropped)) + len(dropped["size"]) == 3
    files[0].write_text("<html><body><p>no table here</p></body></html>")
    dropped = {}
    wiki_tables(data, dropped)
    assert dropped["no_table"] == [f"200-csv/{files[0].name}"]
    html = files[1].read_text()
    files[1].write_text(html[: len(html) // 2])  # a truncated download
    with pytest.raises(DataError, match=rf"{files[1].name}: .*truncated or broken HTML"):
        wiki_tables(data, {})
    files[1].write_bytes(html.encode()[:200] + b"\xff" + html.encode()[200:])
    with pytest.raises(DataError, match=rf"{files[1].name}: not UTF-8 at byte 200"):
        wiki_tables(data, {})


def test_a_cell_holding_cut_markup_is_refused():
    from extractbench.suites.tableqa.html import HTMLTableError, html_to_table

    broken = "<table><tr><th>a</th><th>b</th></tr><tr><td>x &lt;a href</td><td>y</td></tr></table>"
    with pytest.raises(HTMLTableError, match="markup in a cell") as exc:
        html_to_table(broken, "t")
    assert exc.value.broken


def _strucbench_data(tmp_path: Path, scigen: object) -> Path:
    (tmp_path / "strucbench" / "e2e").mkdir(parents=True)
    (tmp_path / "strucbench" / "e2e" / "test-fixed.csv").write_text(
        'mr,ref,orig_mr\n"name[The Eagle], food[French]",The Eagle serves French food.,x\n'
    )
    (tmp_path / "strucbench" / "scigen").mkdir()
    for name in ("test-CL.json", "test-Other.json"):
        (tmp_path / "strucbench" / "scigen" / name).write_text(json.dumps(scigen))
    return tmp_path


GOOD = {"table_column_names": ["m", "acc"], "table_content_values": [["a", "1"]],
        "table_caption": "c"}  # fmt: skip


@pytest.mark.parametrize(
    ("scigen", "message"),
    [
        ([GOOD], "must be a JSON object of entries, not list"),
        ({"0": "a string"}, "entry 0: must be an object, not str"),
        ({"0": {**GOOD, "table_column_names": 5}}, "entry 0: field table_column_names must be a list of strings"),
        ({"0": {**GOOD, "table_content_values": ["a", "b"]}}, "entry 0: field table_content_values must be a list of lists of strings"),
        ({"0": {**GOOD, "table_caption": None}}, "entry 0: field table_caption must be a string"),
        ({"0": {"table_caption": "c"}}, "entry 0: field table_column_names is missing"),
    ],
)  # fmt: skip
def test_a_scigen_file_of_the_wrong_shape_names_entry_and_field(tmp_path, scigen, message):
    from extractbench.suites.strucbench.items import load_items

    data = _strucbench_data(tmp_path, scigen)
    with pytest.raises(DataError, match=r"test-CL.json: " + message.replace("(", r"\(")):
        load_items(data)


def test_ragged_and_empty_scigen_tables_are_counted_not_used(tmp_path):
    from extractbench.suites.strucbench.items import load_items

    scigen = {"0": GOOD, "1": {**GOOD, "table_content_values": [["a", "1", "extra"]]},
              "2": {**GOOD, "table_content_values": []}}  # fmt: skip
    suite = load_items(_strucbench_data(tmp_path, scigen))
    rejected = suite.notes["tables_rejected"]
    assert rejected["ragged"] == ["test-CL-1", "test-Other-1"]
    assert rejected["empty"] == ["test-CL-2", "test-Other-2"]
    assert sorted(it.id for it in suite.items if "scigen" in it.id) == [
        "strucbench/html/scigen/test-CL-0", "strucbench/html/scigen/test-Other-0",
        "strucbench/latex/scigen/test-CL-0", "strucbench/latex/scigen/test-Other-0",
    ]  # fmt: skip
