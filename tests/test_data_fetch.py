"""The pinned data: manifest, hash-checked fetch from a loopback mirror, verify, offline,
derived files built byte-identical to ../shared/data."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from extractbench.suites.datasets import derive
from extractbench.suites.datasets.fetch import FetchError, fetch
from extractbench.suites.datasets.manifest import load_manifest
from extractbench.suites.files import sha256_of
from tests.conftest import copy_checkout, read_json

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
needs_data = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data not present")
MANIFEST = load_manifest()


class Mirror:
    """Files laid out like the data folder, served on 127.0.0.1; counts GET requests."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.gets: list[str] = []
        mirror = self

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                mirror.gets.append(self.path)
                super().do_GET()

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def mirror(tmp_path):
    root = tmp_path / "mirror"
    for suite in ("fda", "tablebench"):
        for path, entry in MANIFEST.suites[suite].items():
            if entry.build in (None, "tablebench-examples"):
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(SHARED / path, root / path)
    server = Mirror(root)
    yield server
    server.stop()


@pytest.fixture
def repo(tmp_path):
    """A copy of the project with no ../shared/data beside it (a fresh machine)."""
    return copy_checkout(tmp_path / "fresh" / "repo")


def _run(repo: Path, cache: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "EXTRACTBENCH_DATA_CACHE": str(cache)}
    env.pop("EXTRACTBENCH_DATA", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "suites/fda", "--backend", "fake", "-p", "no:cacheprovider",
         "--limit", "20", *args],
        cwd=repo, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@needs_data
def test_a_run_fetches_from_a_mirror_verifies_and_measures_the_same_items(repo, mirror, tmp_path):
    cache = tmp_path / "cache"
    first = _run(repo, cache, "-n", "2", "--mirror", mirror.url, "--report-json", "r1.json")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    assert "extractbench: fetching fda: 150 files, 4.2 MB from " + mirror.url in first.stderr
    rec = read_json(repo / "r1.json")
    assert rec["data"]["origin"] == "fetched" and rec["data"]["suites"]["fda"]["matches_manifest"]
    assert len(mirror.gets) == 150  # the labels are built, not downloaded
    assert not MANIFEST.verify_files(cache / MANIFEST.version, ["fda"])
    shared = _run(repo, cache, "--data-dir", str(SHARED), "--report-json", "r0.json")
    assert shared.returncode == 0
    same = read_json(repo / "r0.json")
    assert [(i["id"], i["prompt_sha256"]) for i in rec["items"]] == [
        (i["id"], i["prompt_sha256"]) for i in same["items"]
    ]
    assert same["data"]["suites"]["fda"]["sha256"] == rec["data"]["suites"]["fda"]["sha256"]
    second = _run(repo, cache, "-n", "2", "--mirror", mirror.url, "--report-json", "r2.json")
    assert second.returncode == 0 and "fetching" not in second.stderr
    assert len(mirror.gets) == 150 and read_json(repo / "r2.json")["data"]["origin"] == "user cache"


@needs_data
def test_offline_with_nothing_cached_is_a_usage_error_naming_the_fetch_command(repo, tmp_path):
    result = _run(repo, tmp_path / "cache", "--offline")
    assert result.returncode == 4
    assert "fda: data missing" in result.stderr and "`extractbench data fetch fda`" in result.stderr


@needs_data
def test_a_refused_connection_is_one_line_and_a_usage_error(repo, tmp_path):
    result = _run(repo, tmp_path / "cache", "--mirror", "http://127.0.0.1:9")
    assert result.returncode == 4
    lines = result.stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("ERROR"))
    assert "data fetch failed: cannot fetch fda/docs/" in lines[start]
    assert "refuses connections" in lines[start], result.stderr[-2000:]
    assert lines[start + 1].startswith("fda: data missing") and "Traceback" not in result.stderr
    cli = subprocess.run(
        [sys.executable, "-m", "extractbench.plugins.cli.main", "data", "fetch", "fda", "--mirror", "http://127.0.0.1:9",
         "--dest", str(tmp_path / "d")], cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert cli.returncode == 1 and cli.stderr.count("\n") == 1  # one line
    assert "cannot fetch fda/docs/" in cli.stderr and "refuses connections" in cli.stderr


@needs_data
def test_a_corrupted_cached_file_is_fetched_again(mirror, tmp_path):
    dest = tmp_path / "d"
    fetch(MANIFEST, ["fda"], dest, mirror=mirror.url, progress=False, say=lambda _: None)
    doc = dest / "fda" / "docs" / "K153137_REVIEW.md"
    data = bytearray(doc.read_bytes())
    data[10] ^= 1  # same size, other bytes
    doc.write_bytes(bytes(data))
    assert MANIFEST.verify_files(dest, ["fda"]) == ["fda/docs/K153137_REVIEW.md"]
    again = fetch(MANIFEST, ["fda"], dest, mirror=mirror.url, progress=False, say=lambda _: None)
    assert again == ["fda/docs/K153137_REVIEW.md"] and not MANIFEST.verify_files(dest, ["fda"])


@needs_data
def test_a_truncated_download_is_not_accepted(mirror, tmp_path):
    served = mirror.root / "fda" / "docs" / "K153137_REVIEW.md"
    served.write_bytes(served.read_bytes()[:1000])
    dest = tmp_path / "d"
    with pytest.raises(FetchError, match="K153137_REVIEW.md from .* does not match its sha256"):
        fetch(MANIFEST, ["fda"], dest, mirror=mirror.url, progress=False, say=lambda _: None)
    local = dest / "fda" / "docs" / "K153137_REVIEW.md"
    assert (
        not local.exists()
        or sha256_of(local) != MANIFEST.suites["fda"]["fda/docs/K153137_REVIEW.md"].sha256
    )
    assert "fda/docs/K153137_REVIEW.md" in MANIFEST.verify_files(dest, ["fda"])


@needs_data
def test_the_tablebench_examples_are_fetched_from_a_mirror_and_verified(mirror, tmp_path):
    dest = tmp_path / "d"
    fetch(MANIFEST, ["tablebench"], dest, mirror=mirror.url, progress=False, say=lambda _: None)
    assert not MANIFEST.verify_files(dest, ["tablebench"])


@needs_data
def test_derived_files_are_built_byte_identical():
    def panels(path: Path) -> dict[str, str]:
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
        return {r["doc_id"]: r["panel"] for r in rows}

    labels = SHARED / "fda" / "fda_kv_labels_derived.jsonl"
    docs = derive.read_docs(SHARED / "fda" / "docs", "{}_REVIEW.md", panels(labels))
    assert derive.fda_labels_file(docs) == labels.read_bytes()
    manifest = SHARED / "minea" / "haystacks_manifest.jsonl"
    docs = derive.read_docs(SHARED / "minea" / "haystacks", "{}.md", panels(manifest))
    assert derive.minea_manifest_file(docs) == manifest.read_bytes()
    examples = SHARED / "tableqa" / "tablebench" / "TableBench_DP_official_example_54.jsonl"
    upstream = "".join(
        json.dumps({**json.loads(x), "model_name": "o3-mini", "prediction": "..."}, ensure_ascii=False) + "\n"
        for x in examples.read_text(encoding="utf-8").splitlines()
    )  # fmt: skip
    assert derive.tablebench_examples_file(upstream.encode()) == examples.read_bytes()


@needs_data
def test_the_manifest_pins_the_shared_data_and_covers_what_every_loader_reads(tmp_path):
    assert [p for p in MANIFEST.verify(SHARED) if not p.startswith("extra")] == []
    only = tmp_path / "only-manifest"
    for path in MANIFEST.files():
        (only / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SHARED / path, only / path)
    from extractbench.suites.fda.items import load_items as fda
    from extractbench.suites.minea.items import load_items as minea
    from extractbench.suites.strucbench.items import load_items as strucbench
    from extractbench.suites.tablebench.items import load_tablebench
    from extractbench.suites.tableqa.items import load_items as tableqa

    for load in (fda, minea, strucbench, tableqa, load_tablebench):
        assert load(only).items, load
    for entry in MANIFEST.files().values():
        assert (
            entry.url.startswith("https://raw.githubusercontent.com/") and len(entry.sha256) == 64
        )
        assert entry.source in MANIFEST.sources and MANIFEST.sources[entry.source].license


def test_based_fda_loads_from_a_local_dataset_folder_in_its_schema(tmp_path):
    pytest.importorskip("datasets")
    from extractbench.suites.fda.items import load_items
    from extractbench.suites.fda.suite import FdaOptions

    chunk = "A. 510(k) Number: k123456\nE. Applicant: Acme Diagnostics"
    rows = [
        {"text": f"{chunk}\n{key}:", "value": value}
        for key, value in (("510k number", " k123456"), ("applicant", "Acme Diagnostics"))
    ]
    rows.append({"text": "Other chunk\nApplicant:", "value": "Beta"})
    (tmp_path / "validation.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = load_items(tmp_path / "unused", FdaOptions(source="based-fda", dataset=str(tmp_path)))
    assert len(suite.items) == 3 and suite.notes["chunks"] == 2
    first = suite.items[0]
    assert first.prompt == rows[0]["text"] and first.reference == "k123456"
    assert first.meta["key"] == "510k number" and first.group == suite.items[1].group
    assert suite.items[2].group != first.group


def test_tablebench_loads_the_hub_release_from_a_local_folder(tmp_path):
    pytest.importorskip("datasets")
    from extractbench.suites.tablebench.items import load_tablebench
    from extractbench.suites.tablebench.suite import TableBenchOptions

    base = {"qtype": "FactChecking", "qsubtype": "MatchBased", "question": "q?", "answer": "yes",
            "table": "{}", "instruction": "Official DP prompt: q?"}  # fmt: skip
    rows = [{**base, "id": "a", "instruction_type": "DP"},
            {**base, "id": "a", "instruction_type": "TCoT", "instruction": "other"},
            {**base, "id": "b", "instruction_type": "DP", "qtype": "Visualization"}]  # fmt: skip
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = load_tablebench(
        tmp_path / "unused", TableBenchOptions(source="hub", dataset=str(tmp_path))
    )
    assert [it.id for it in suite.items] == ["tablebench/FactChecking/a"]
    assert suite.items[0].prompt == "Official DP prompt: q?Final Answer:"


def test_a_hub_source_needs_no_local_data():
    """A suite whose source option points elsewhere is not checked for local files."""
    from extractbench.suites.registry import Registry

    spec = Registry.installed().get("fda")
    assert not spec.reads_local_data({"source": "based-fda"}) and spec.reads_local_data({})
    assert spec.missing_data(None, {"source": "based-fda"}) == []
    assert spec.missing_data(None, {}) == ["fda/fda_kv_labels_derived.jsonl"]


@needs_data
def test_the_committed_manifest_is_what_the_builder_writes_from_the_shared_data():
    from extractbench.suites.datasets.build_manifest import build_manifest
    from extractbench.suites.datasets.manifest import MANIFEST_PATH

    assert build_manifest(SHARED) == json.loads(MANIFEST_PATH.read_text(encoding="utf-8"))


@needs_data
def test_upstream_tablebench_examples_are_derived_on_arrival(tmp_path):
    """Without a mirror the official example file (with the model's fields) is downloaded
    and the pinned file derived from it."""
    import dataclasses

    root = tmp_path / "upstream"
    root.mkdir()
    examples = SHARED / "tableqa" / "tablebench" / "TableBench_DP_official_example_54.jsonl"
    (root / "official.jsonl").write_text("".join(
        json.dumps({**json.loads(x), "model_name": "o3-mini", "prediction": "..."}) + "\n"
        for x in examples.read_text(encoding="utf-8").splitlines()
    ))  # fmt: skip
    shutil.copy(SHARED / "tableqa/tablebench/TableBench_test_886.jsonl", root / "test.jsonl")
    server = Mirror(root)
    try:
        manifest = load_manifest()
        files = manifest.suites["tablebench"]
        for path, name in ((examples.relative_to(SHARED).as_posix(), "official.jsonl"),
                           ("tableqa/tablebench/TableBench_test_886.jsonl", "test.jsonl")):  # fmt: skip
            files[path] = dataclasses.replace(files[path], url=f"{server.url}/{name}")
        dest = tmp_path / "d"
        fetch(manifest, ["tablebench"], dest, progress=False, say=lambda _: None)
    finally:
        server.stop()
    assert not manifest.verify_files(dest, ["tablebench"])


@needs_data
def test_a_destination_that_cannot_be_written_is_one_error(mirror, tmp_path):
    (tmp_path / "afile").write_text("not a folder")
    with pytest.raises(FetchError, match="cannot"):
        fetch(MANIFEST, ["fda"], tmp_path / "afile" / "d", mirror=mirror.url, progress=False,
              say=lambda _: None)  # fmt: skip


class SlowMirror:
    """Serves one file's right bytes at 16 B/s (``trickle``), or its headers and then
    nothing (``stall``), on 127.0.0.1."""

    def __init__(self, data: bytes, how: str) -> None:
        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    for i in range(0, len(data), 16) if how == "trickle" else ():
                        self.wfile.write(data[i : i + 16])
                        self.wfile.flush()
                        time.sleep(1.0)
                    if how == "stall":
                        time.sleep(30)
                except OSError:
                    pass  # the client gave up

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@needs_data
@pytest.mark.parametrize("how", ["trickle", "stall"])
def test_a_slow_mirror_ends_at_the_files_deadline_in_one_line(how, tmp_path, monkeypatch):
    """The total deadline comes from the file's size (here cut to 5 s: CONNECT_S 1 + STALL_S
    2 + size / MIN_RATE 2), the stall one from STALL_S; each is one line naming the file."""
    from extractbench.suites.datasets import fetch as fetch_module

    monkeypatch.setattr(fetch_module, "CONNECT_S", 1.0)
    monkeypatch.setattr(fetch_module, "STALL_S", 2.0)
    path = "fda/docs/K050029_REVIEW.md"  # the first the fetch asks for
    data = (SHARED / path).read_bytes()
    monkeypatch.setattr(fetch_module, "MIN_RATE", len(data) / 2)  # 2 s for its size
    server = SlowMirror(data, how)
    start = time.monotonic()
    try:
        with pytest.raises(FetchError) as info:
            fetch(
                MANIFEST,
                ["fda"],
                tmp_path / "d",
                mirror=server.url,
                progress=False,
                say=lambda _: None,
            )
    finally:
        server.stop()
    took = time.monotonic() - start
    message = str(info.value)
    assert message.startswith("cannot fetch fda/docs/") and "\n" not in message
    if how == "trickle":  # 16 B/s never stalls 2 s; the file's deadline ends it
        assert "not complete within 5 s, the deadline for 44,515 bytes" in message and took < 10
    else:
        assert "no byte for 2 s (the transfer stalled)" in message and took < 10
    assert not (tmp_path / "d" / "fda" / "docs").exists() or not any(
        (tmp_path / "d" / "fda" / "docs").iterdir()
    )


def test_a_files_deadline_grows_with_its_size():
    from extractbench.suites.datasets.fetch import CONNECT_S, MIN_RATE, STALL_S, deadline_s

    assert deadline_s(0) == CONNECT_S + STALL_S
    assert deadline_s(50_000) - deadline_s(0) == pytest.approx(50_000 / MIN_RATE)
