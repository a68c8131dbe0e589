"""MINEA on a user's own documents (``minea.documents=DIR``): needles generated and infused
into the user's files as into the data folder's, no data folder needed; a bad folder or file
is one line and exit 4 before any model call."""

from __future__ import annotations

import json
import random

import pytest

WORDS = "the contract supplier delivery shall invoice payment terms quality audit period".split()


def _documents(pytester: pytest.Pytester) -> None:
    rng = random.Random(3)
    (pytester.path / "mydocs" / "sub").mkdir(parents=True)
    for name in ("mydocs/a.txt", "mydocs/sub/b report.md"):
        paragraphs = [" ".join(rng.choice(WORDS) for _ in range(60)) + "." for _ in range(25)]
        (pytester.path / name).write_text("\n\n".join(paragraphs))
    (pytester.path / "mydocs" / "notes.csv").write_text("not a document,\n")


def _run(pytester: pytest.Pytester, documents: str = "mydocs") -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--pyargs", "extractbench.suites.minea", "--backend", "fake",
        "--suite-option", f"minea.documents={documents}",
        "--suite-option", "minea.iterations=0", "--suite-option", "minea.control=false",
        "--suite-option", "minea.encoder=tfidf",  # the sentence encoder is not what is tested
    )  # fmt: skip


def test_minea_runs_on_the_user_s_documents_without_a_data_folder(pytester, monkeypatch):
    monkeypatch.delenv("EXTRACTBENCH_DATA", raising=False)
    _documents(pytester)
    result = _run(pytester)
    assert result.ret == 0, result.stdout.str()[-2000:]
    (path,) = (pytester.path / "reports").glob("*.json")
    record = json.loads(path.read_text())
    assert sorted(it["id"] for it in record["items"]) == ["minea/a", "minea/sub/b_report"]
    data = record["suites"]["minea"]["notes"]["data"]
    assert data["files"] == 2 and len(data["sha256"]) == 64
    assert all(it["meta"]["needles"] for it in record["items"])  # needles were infused


@pytest.mark.parametrize(
    "documents, message",
    [
        ("nowhere", "minea.documents=nowhere: no such folder"),
        ("empty", "minea.documents=empty: no .txt or .md document in it"),
        ("bad", "bad/x.txt: not UTF-8"),
    ],
    ids=["no folder", "no document", "not UTF-8"],
)
def test_a_bad_documents_folder_is_one_line_and_exit_4(pytester, documents, message):
    (pytester.path / "empty").mkdir()
    (pytester.path / "bad").mkdir()
    (pytester.path / "bad" / "x.txt").write_bytes(b"caf\xe9 " * 50)
    result = _run(pytester, documents)
    assert result.ret == 4
    assert message in result.stdout.str() + result.stderr.str()
