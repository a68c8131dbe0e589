"""Fail closed on what a run reads: JSON nested past any sane depth (records, data lines,
model answers), derived caches that were edited, data files that links take outside the
data folder, a byte-order mark before a CSV header, and no data found where a user has
none. Black-box where it is plugin behaviour (with and without ``-n 2``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from extractbench.suites.links import docs_url
from tests.conftest import copy_checkout, read_json
from tests.test_plugin import MODES, run

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
needs_data = pytest.mark.skipif(not (SHARED / "fda").is_dir(), reason="the data folder is absent")
DEEP = 200_000  # nesting levels: far past the interpreter's recursion limit


def _deep(levels: int = DEEP) -> str:
    return "[" * levels + "]" * levels


def _no_traceback(text: str) -> None:
    assert "Traceback" not in text and "INTERNALERROR" not in text, text[-3000:]
    assert "RecursionError" not in text, text[-3000:]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "extractbench.plugins.cli.main", *args],
        cwd=cwd, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip


def _suites(*args: str, cache: Path | None = None) -> subprocess.CompletedProcess:
    """``pytest`` on this project's suites with the fake model (a user's command line)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in ("EXTRACTBENCH_DATA", "EXTRACTBENCH_OFFLINE"):
        env.pop(name, None)
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--backend", "fake", "--no-cache",
         "-p", "no:cacheprovider", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip


def _usage_line(done: subprocess.CompletedProcess | pytest.RunResult, needle: str) -> None:
    out = (
        done.stdout + done.stderr
        if isinstance(done, subprocess.CompletedProcess)
        else (done.stdout.str() + done.stderr.str())
    )
    code = done.returncode if isinstance(done, subprocess.CompletedProcess) else done.ret
    assert code == 4, out[-3000:]
    assert needle in out, out[-3000:]
    _no_traceback(out)


# ------------------------------------------------------------------ the one parser


def test_the_parser_refuses_deep_values_as_invalid_json():
    from extractbench.suites import safe_json

    cases = [(_deep(), 100), (_deep(101), 100), ('{"a": ' * 5000 + "1" + "}" * 5000, 600)]
    for text, first_too_deep in cases:
        with pytest.raises(json.JSONDecodeError, match="nested deeper than 100 levels") as exc:
            safe_json.loads(text)
        assert safe_json.too_deep(exc.value) and exc.value.pos == first_too_deep
    assert safe_json.loads(_deep(100)) == json.loads(_deep(100))
    assert safe_json.loads('["[[[[", {"a": [1]}]') == ["[[[[", {"a": [1]}]
    # as bytes, and with exactly the limit's 101 brackets, 100 of them inside a string
    with pytest.raises(json.JSONDecodeError, match="nested deeper than 3 levels"):
        safe_json.loads(b"[[[[1]]]]", max_depth=3)
    assert safe_json.loads('["' + "[" * 100 + '"]') == ["[" * 100]
    with pytest.raises(json.JSONDecodeError, match="nested deeper"):
        safe_json.raw_decode("x " + _deep(), 2)


def test_the_nesting_limit_is_each_values_own_depth():
    """The limit read from the text (strings with brackets, empty containers, indents)
    against the depth of the parsed value, at every limit up to one past it."""
    import random

    from extractbench.suites import safe_json

    def depth(value) -> int:
        children = value.values() if isinstance(value, dict) else value
        if not isinstance(value, dict | list):
            return 0
        return 1 + max((depth(child) for child in children), default=0)

    def value(rng: random.Random, levels: int):
        if levels == 0 or rng.random() < 0.2:
            return rng.choice([1, "a[{b", 'x"]\\', None, [], {}])
        if rng.random() < 0.5:
            return [value(rng, levels - 1) for _ in range(rng.randint(0, 3))]
        return {f"k{i}[": value(rng, levels - 1) for i in range(rng.randint(0, 3))}

    rng = random.Random(1)
    for _ in range(500):
        made = value(rng, rng.randint(0, 8))
        text = json.dumps(made, indent=rng.choice([None, 1]))
        for limit in range(depth(made) + 2):
            too_deep = depth(made) > limit
            try:
                assert safe_json.loads(text, max_depth=limit) == made and not too_deep
            except json.JSONDecodeError as exc:
                assert too_deep and safe_json.too_deep(exc), (text, limit)


def test_the_package_parses_json_only_through_the_depth_limited_helper():
    parse = re.compile(r"(?<![\w.])(json\.loads?\(|JSONDecoder\()|(?<!safe_json\.)raw_decode\(")
    calls = [
        f"{path.relative_to(ROOT)}: {match.group()}"
        for package in ("plugins", "fixtures", "suites")
        for path in (ROOT / package).rglob("*.py")
        # bundle_install.py runs as install.py, with bundle_parts.py beside it, where the
        # package is not installed yet (standard library only); each catches RecursionError
        if path.name not in ("safe_json.py", "bundle_install.py", "bundle_parts.py")
        for match in parse.finditer(path.read_text(encoding="utf-8"))
    ]
    assert not calls, calls


# ------------------------------------------------------------------ deep run records


def _deep_record(toy: pytest.Pytester) -> Path:
    """A valid run record of the toy suite whose first item's details nest 200,000 deep."""
    _, record = run(toy, [])
    record["items"][0]["details"] = {"x": "PLACEHOLDER"}
    path = toy.path / "deep.json"
    path.write_text(json.dumps(record).replace('"PLACEHOLDER"', _deep(), 1))
    return path


def test_report_and_compare_of_a_deep_record_are_one_usage_line(toy):
    deep = _deep_record(toy)
    good = toy.path / "record.json"
    for args in (["report", str(deep)], ["compare", str(deep), str(good)],
                 ["compare", str(good), str(deep)], ["merge", str(deep), str(good), "-o",
                                                      str(toy.path / "m.json")]):  # fmt: skip
        done = _cli(*args, cwd=toy.path)
        _usage_line(done, "nested deeper than 100 levels")
        assert str(deep) in done.stderr


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("option", ["--rescore", "--baseline"])
def test_rescore_or_baseline_of_a_deep_record_is_one_usage_line(toy, mode, option):
    deep = _deep_record(toy)
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", option, str(deep), *mode
    )
    _usage_line(result, "nested deeper than 100 levels")
    result.stderr.fnmatch_lines([f"*{option} {deep}*nested deeper than 100 levels*"])


# ------------------------------------------------------------------ deep data lines


def _fda_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A data folder holding a copy of the FDA files, and its labels file."""
    data = tmp_path / "data"
    shutil.copytree(SHARED / "fda", data / "fda")
    return data, data / "fda" / "fda_kv_labels_derived.jsonl"


@needs_data
@pytest.mark.parametrize("mode", MODES)
def test_a_deep_data_line_is_one_usage_line_naming_file_and_line(tmp_path, mode):
    data, labels = _fda_copy(tmp_path)
    lines = labels.read_text(encoding="utf-8").splitlines()
    lines[2] = '{"doc_id": ' + _deep() + "}"
    labels.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = _suites("suites/fda", "--data-dir", str(data), "--allow-changed-data", "--limit", "2",
                   *mode)  # fmt: skip
    _usage_line(done, f"{labels}:3: not valid JSON (nested deeper than 100 levels)")


# ------------------------------------------------------------------ deep model answers


def test_a_deep_minea_answer_is_a_parse_failure_with_its_reason():
    from extractbench.fixtures.models.fake.backend import ScriptedBackend
    from extractbench.suites.minea.extraction import extract_document, parse_answer
    from extractbench.suites.minea.schema import load_schema

    assert parse_answer(_deep()) == ([], "nested deeper than 100 levels")
    deep_objects = '[{"name": "a"}, ' + "{" + '"x": ' * 5000 + "1" + "}" * 5000 + "]"
    entities, problem = parse_answer(deep_objects)
    assert problem and entities == [{"name": "a", "keywords": [], "type": "", "description": ""}]
    extraction = extract_document(
        ScriptedBackend(lambda prompt: _deep(), counts_tokens=False),
        load_schema(),
        "Some text. " * 50,
        iterations=1,
    )
    assert extraction.calls and extraction.parse_failures == len(extraction.calls)
    assert {c.problem for c in extraction.calls} == {"nested deeper than 100 levels"}
    assert extraction.entities == []


# ------------------------------------------------------------------ derived caches


@pytest.fixture(scope="module")
def fda_cache(tmp_path_factory):
    """(data folder, user cache, items): four FDA documents with their labels, and a user
    cache whose derived chunk entry a run built from them (the default model linked in
    from the real user cache, so it is not assembled again)."""
    if not (SHARED / "fda").is_dir():
        pytest.skip("the data folder is absent")
    from extractbench.suites.model_files import default_model_path

    root = tmp_path_factory.mktemp("fda")
    labels = SHARED / "fda" / "fda_kv_labels_derived.jsonl"
    rows = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines()]
    keep = sorted({row["doc_id"] for row in rows})[:4]
    rows = [row for row in rows if row["doc_id"] in keep]
    (root / "data" / "fda" / "docs").mkdir(parents=True)
    for row in rows:
        shutil.copy(SHARED / "fda" / row["doc_file"], root / "data" / "fda" / row["doc_file"])
    (root / "data" / "fda" / labels.name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    cache = root / "xdg"
    (cache / "extractbench").mkdir(parents=True)
    models = default_model_path().parent
    (cache / "extractbench" / "models").symlink_to(models, target_is_directory=True)
    items, code, out = _fda_run(root / "data", cache, root)
    assert code == 0 and items, out[-3000:]
    return root / "data", cache, items


def _cache_copy(fda_cache: tuple[Path, Path, int], tmp_path: Path) -> tuple[Path, Path]:
    cache = tmp_path / "xdg"
    shutil.copytree(fda_cache[1], cache, symlinks=True)
    (entry,) = (cache / "extractbench" / "derived").glob("fda-chunks-*.json")
    return cache, entry


def _shrink(entry: Path) -> None:
    """Keep the chunk spans of one document only, the file still valid JSON."""
    data = json.loads(entry.read_text(encoding="utf-8"))
    spans = data["value"]["spans"]
    data["value"]["spans"] = dict(list(spans.items())[:1])
    entry.write_text(json.dumps(data), encoding="utf-8")


def _fda_run(data: Path, cache: Path, tmp_path: Path, *args: str) -> tuple[int | None, int, str]:
    """(the FDA suite's item count in the record, or None; exit status; output)."""
    record = tmp_path / "r.json"
    done = _suites("suites/fda", "--data-dir", str(data), "--allow-changed-data", "--limit", "2",
                   "--report-json", str(record), *args, cache=cache)  # fmt: skip
    out = done.stdout + done.stderr
    _no_traceback(out)
    total = read_json(record)["suites"]["fda"]["items_total"] if record.is_file() else None
    return total, done.returncode, out


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("damage", ["shrunk", "malformed", "not json"])
def test_a_damaged_derived_cache_is_rebuilt(fda_cache, tmp_path, mode, damage):
    cache, entry = _cache_copy(fda_cache, tmp_path)
    sound = entry.read_bytes()
    if damage == "shrunk":
        _shrink(entry)
    elif damage == "malformed":
        entry.write_text('{"tokenizer": "x", "spans": 5}', encoding="utf-8")
    else:
        entry.write_bytes(sound[: len(sound) // 2])
    total, _, out = _fda_run(fda_cache[0], cache, tmp_path, *mode)
    assert total == fda_cache[2], out[-3000:]
    assert json.loads(entry.read_bytes()) == json.loads(sound)  # replaced by a sound entry


@pytest.mark.parametrize("mode", MODES)
def test_offline_a_damaged_derived_cache_is_one_usage_line_naming_it(fda_cache, tmp_path, mode):
    cache, entry = _cache_copy(fda_cache, tmp_path)
    _shrink(entry)
    total, code, out = _fda_run(fda_cache[0], cache, tmp_path, "--offline", *mode)
    assert code == 4 and not total, out[-3000:]
    assert f"{entry}: derived cache entry does not match its own sha256" in out, out[-3000:]


def test_a_sound_entry_is_used_and_one_of_other_inputs_is_not(tmp_path, monkeypatch):
    from extractbench.suites import derived_cache
    from extractbench.suites.item import DataError

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("EXTRACTBENCH_OFFLINE", raising=False)
    key, other = derived_cache.digest_of(["a"]), derived_cache.digest_of(["b"])
    assert derived_cache.cached_json("t", key, lambda: {"v": 1}) == {"v": 1}
    assert derived_cache.cached_json("t", key, lambda: {"v": 2}) == {"v": 1}  # read back
    path = derived_cache.entry_path("t", key)
    entry = json.loads(path.read_text())
    entry["source"] = other
    path.write_text(json.dumps(entry))
    with derived_cache.offline(True), pytest.raises(DataError, match="other inputs"):
        derived_cache.cached_json("t", key, lambda: {"v": 3})
    assert derived_cache.cached_json("t", key, lambda: {"v": 3}) == {"v": 3}  # rebuilt
    assert derived_cache.cached_json("t", key, lambda: {"v": 4}) == {"v": 3}


# ------------------------------------------------------------------ links and BOMs


@needs_data
@pytest.mark.parametrize("mode", MODES)
def test_a_labels_file_linked_from_outside_the_data_folder_is_refused(tmp_path, mode):
    data, labels = _fda_copy(tmp_path)
    outside = tmp_path / "elsewhere.jsonl"
    shutil.move(labels, outside)  # the same bytes: the manifest check passes
    labels.symlink_to(outside)
    done = _suites("suites/fda", "--data-dir", str(data), "--limit", "2", *mode)
    _usage_line(done, "is outside the data folder")
    assert str(outside) in done.stdout + done.stderr


def test_a_csv_with_a_byte_order_mark_is_read_as_without_one(tmp_path):
    from extractbench.suites.files import read_text
    from extractbench.suites.item import DataError
    from extractbench.suites.jsonl import iter_jsonl

    csv = tmp_path / "t.csv"
    csv.write_bytes(b"\xef\xbb\xbfmr,ref\nx,y\n")
    assert read_text(csv) == "mr,ref\nx,y\n"
    lines = tmp_path / "t.jsonl"
    lines.write_bytes(b'\xef\xbb\xbf{"a": 1}\n{"b": 2}\n')
    assert [row for _, row in iter_jsonl(lines)] == [{"a": 1}, {"b": 2}]
    csv.write_bytes(b"\xef\xbb\xbfab\xff")
    with pytest.raises(DataError, match="not UTF-8 at byte 5$"):
        read_text(csv)


@pytest.mark.slow
@needs_data
def test_strucbench_reads_an_e2e_csv_saved_with_a_byte_order_mark(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(SHARED / "strucbench", data / "strucbench")
    shutil.copytree(SHARED / "tableqa" / "wtq" / "csv", data / "tableqa" / "wtq" / "csv")
    from extractbench.suites.strucbench.items import E2E_FILE

    csv = data / E2E_FILE
    csv.write_bytes(b"\xef\xbb\xbf" + csv.read_bytes())
    record = tmp_path / "r.json"
    done = _suites("suites/strucbench", "--data-dir", str(data), "--allow-changed-data",
                   "--limit", "3", "--report-json", str(record), "--suite-option",
                   "strucbench.bertscore=off", cache=tmp_path / "xdg")  # fmt: skip
    out = done.stdout + done.stderr
    _no_traceback(out)
    assert "expected columns" not in out and record.is_file(), out[-3000:]
    assert read_json(record)["suites"]["strucbench"]["items_total"] > 0


# ------------------------------------------------------------------ no workplace paths


@needs_data
@pytest.mark.parametrize("mode", MODES)
def test_data_beside_the_checkout_is_not_used_and_messages_name_the_docs(tmp_path, mode):
    """A checkout with a data folder at ../shared/data and no --data-dir: the run does not
    read it (a user has no such folder); the message points to the published docs/data.md."""
    copy = copy_checkout(tmp_path / "fresh" / "repo")
    (tmp_path / "fresh" / "shared").mkdir()
    (tmp_path / "fresh" / "shared" / "data").symlink_to(SHARED, target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": str(copy), "EXTRACTBENCH_DATA_CACHE": str(tmp_path / "c")}
    env.pop("EXTRACTBENCH_DATA", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "suites/fda", "--backend", "fake", "--offline",
         "-p", "no:cacheprovider", "--limit", "2", *mode],
        cwd=copy, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    _usage_line(done, "fda: data missing")
    out = done.stdout + done.stderr
    assert docs_url("docs/data.md#fda") in out and "shared" not in out and "SOURCES" not in out, out


def test_data_info_names_no_workplace_files():
    done = _cli("data", "info", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "shared" not in done.stdout and "SOURCES" not in done.stdout, done.stdout
