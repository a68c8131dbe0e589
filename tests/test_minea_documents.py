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
        (
            "twins",
            "minea.documents=twins: b report.md and b_report.txt both become the id 'b_report'",
        ),
    ],
    ids=["no folder", "no document", "not UTF-8", "one id"],
)
def test_a_bad_documents_folder_is_one_line_and_exit_4(pytester, documents, message):
    (pytester.path / "twins").mkdir()
    for name in ("b report.md", "b_report.txt"):
        (pytester.path / "twins" / name).write_text("a document. " * 50)
    (pytester.path / "empty").mkdir()
    (pytester.path / "bad").mkdir()
    (pytester.path / "bad" / "x.txt").write_bytes(b"caf\xe9 " * 50)
    result = _run(pytester, documents)
    assert result.ret == 4
    assert message in result.stdout.str() + result.stderr.str()


def test_the_items_are_built_once_and_rebuilt_when_an_input_or_the_code_changes(
    pytester, monkeypatch
):
    """The infused documents are cached as derived data: a second load reads them back
    (equal, item for item) without building; a changed document, option or code builds
    them again."""
    from extractbench.suites.minea import items as minea_items
    from extractbench.suites.minea.options import MineaOptions

    monkeypatch.setenv("XDG_CACHE_HOME", str(pytester.path / "cache"))
    _documents(pytester)
    opts = MineaOptions(documents=str(pytester.path / "mydocs"), encoder="tfidf")
    real_build, builds = minea_items._build, []

    def counted(*args):  # noqa: ANN002
        builds.append(1)
        return real_build(*args)

    monkeypatch.setattr(minea_items, "_build", counted)
    first = minea_items.load_items(None, opts)
    again = minea_items.load_items(None, opts)
    assert len(builds) == 1 and [it.to_json() for it in again.items] == [
        it.to_json() for it in first.items
    ]
    assert again.notes["needle_set"] == first.notes["needle_set"]
    assert list((pytester.path / "cache" / "extractbench" / "derived").glob("minea-items-*"))
    minea_items.load_items(None, opts.model_copy(update={"seed": 1}))
    assert len(builds) == 2  # another option
    (pytester.path / "mydocs" / "a.txt").write_text("One new paragraph of a contract.\n\n" * 30)
    changed = minea_items.load_items(None, opts)
    assert len(builds) == 3 and changed.items[0].prompt != first.items[0].prompt
    monkeypatch.setattr(minea_items, "_code_digest", lambda: "another build of the code")
    minea_items.load_items(None, opts)
    assert len(builds) == 4


def test_a_document_linked_from_outside_the_folder_is_refused(pytester):
    """A link in the documents folder to a file outside it (``/etc/passwd`` as well): one
    line and exit 4, the file never read; ``minea.root`` names a wider folder."""
    _documents(pytester)
    outside = pytester.path / "private.md"
    outside.write_text("salary: 123456\n")
    (pytester.path / "mydocs" / "leak.md").symlink_to(outside)
    result = _run(pytester)
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, text[-2000:]
    assert (
        f"minea.documents=mydocs: 'leak.md' is outside {(pytester.path / 'mydocs').resolve()}"
        in text
    )
    assert f"it resolves to {outside.resolve()}" in text and "minea.root=DIR" in text
    (path,) = (pytester.path / "reports").glob("*.json")
    assert "123456" not in path.read_text()
