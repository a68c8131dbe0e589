"""Fail closed on data: a fetch killed midway leaves no partial file beside the
data, and a data file that changed after it was fetched is an error naming it, its
expected digest and the fix. Every server here is a loopback one the test starts."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from extractbench.suites.datasets import verify
from extractbench.suites.datasets.fetch import STAGING, fetch
from extractbench.suites.datasets.manifest import Manifest, load_manifest
from extractbench.suites.datasets.verify import DataChanged, DigestMemo, verify_suite_data
from extractbench.suites.item import DataMissing
from tests import test_data_fetch
from tests.test_data_fetch import MANIFEST, SHARED, _run, needs_data

repo = test_data_fetch.repo  # the fixture: a copy of the project without ../shared/data

ROOT = Path(__file__).resolve().parents[1]
SMALL = b"applicant: Acme\n" * 64
BIG = bytes(range(256)) * 8192  # 2 MiB


class StallingMirror:
    """Serves ``files`` (path -> bytes) on 127.0.0.1; with ``stall``, sends the first half
    of ``stall``'s bytes and then nothing until :meth:`stop`."""

    def __init__(self, files: dict[str, bytes], stall: str | None = None) -> None:
        self.files, self.stall = files, stall
        self.half_sent = threading.Event()
        self._stopped = threading.Event()
        mirror = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                data = mirror.files.get(self.path.lstrip("/"))
                if data is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.path.lstrip("/") != mirror.stall:
                    self.wfile.write(data)
                    return
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                mirror.half_sent.set()
                mirror._stopped.wait(600)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self._stopped.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def _manifest(tmp_path: Path, files: dict[str, bytes]) -> Path:
    entries = {
        p: {"sha256": hashlib.sha256(b).hexdigest(), "size": len(b), "source": "t",
            "upstream": p, "url": f"http://upstream.invalid/{p}"}
        for p, b in files.items()
    }  # fmt: skip
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({
        "version": "t1",
        "sources": {"t": {"repository": "tests/toy", "commit": "0" * 40, "license": "MIT"}},
        "suites": {"toy": entries},
    }))  # fmt: skip
    return path


FETCHER = """
import sys
from pathlib import Path
from extractbench.suites.datasets.fetch import fetch
from extractbench.suites.datasets.manifest import load_manifest

fetch(load_manifest(Path(sys.argv[1])), ["toy"], Path(sys.argv[2]), mirror=sys.argv[3],
      progress=False)
"""


def _data_files(dest: Path) -> dict[str, bytes]:
    """Every file in the data folder outside the staging folder, by relative path (the
    fetch lock's file, ``.fetch.lock``, holds a pid, not data)."""
    return {
        p.relative_to(dest).as_posix(): p.read_bytes()
        for p in dest.rglob("*")
        if p.is_file() and STAGING not in p.relative_to(dest).parts and p.name != ".fetch.lock"
    }


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM])
def test_a_fetch_killed_midway_leaves_no_partial_file_beside_the_data(tmp_path, stop):
    files = {"toy/a.txt": SMALL, "toy/docs/big.bin": BIG}
    manifest = _manifest(tmp_path, files)
    dest = tmp_path / "data"
    mirror = StallingMirror(files, stall="toy/docs/big.bin")
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", FETCHER, str(manifest), str(dest), mirror.url], cwd=ROOT
        )
        assert mirror.half_sent.wait(120), "the fetch never reached the stalling file"
        time.sleep(0.5)  # the first half is on disk by now
        proc.send_signal(stop)
        assert proc.wait(timeout=60) == -stop
    finally:
        mirror.stop()
    assert _data_files(dest) == {"toy/a.txt": SMALL}  # whole and verified, nothing else
    staged = [p for p in (dest / STAGING).rglob("*") if p.is_file()]
    assert staged and sum(p.stat().st_size for p in staged) >= len(BIG) // 2  # it was killed
    # the next fetch sweeps the staging folder and completes
    good = StallingMirror(files)
    try:
        done = fetch(load_manifest(manifest), ["toy"], dest, mirror=good.url, progress=False,
                     say=lambda _: None)  # fmt: skip
    finally:
        good.stop()
    assert done == ["toy/docs/big.bin"]
    assert _data_files(dest) == files
    # no staging folder left, and the killed fetch's lock file was taken over and deleted
    assert sorted(p.name for p in dest.iterdir()) == ["toy"]


# ---------------------------------------------------------------- verified on use


def _toy_manifest(tmp_path: Path) -> tuple[Manifest, Path]:
    files = {"toy/a.txt": SMALL, "toy/docs/big.bin": BIG}
    folder = tmp_path / "data"
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    return load_manifest(_manifest(tmp_path, files)), folder


def test_the_memo_hashes_a_file_once_and_again_only_when_it_changed(tmp_path, monkeypatch):
    monkeypatch.setattr(verify, "RACY_NS", 0)  # files written a moment ago may be remembered
    manifest, folder = _toy_manifest(tmp_path)
    db = tmp_path / "memo" / "verified.sqlite"
    first = DigestMemo(db)
    assert verify_suite_data(folder, "toy", manifest=manifest, memo=first) == []
    assert (first.hashed, first.remembered) == (2, 0)
    first.close()
    second = DigestMemo(db)  # another process, later: from the memo
    assert verify_suite_data(folder, "toy", manifest=manifest, memo=second) == []
    assert (second.hashed, second.remembered) == (0, 2)
    # same size, mtime set back: the ctime still moved, so it is read again and refused
    big = folder / "toy" / "docs" / "big.bin"
    before = big.stat()
    big.write_bytes(b"x" + BIG[1:])
    os.utime(big, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(DataChanged) as changed:
        verify_suite_data(folder, "toy", manifest=manifest, memo=second)
    assert second.hashed == 1 and changed.value.path == big
    expected = hashlib.sha256(BIG).hexdigest()
    assert str(changed.value) == (
        f"{big}: not the file the data manifest pins (sha256 {expected}, 2,097,152 bytes; "
        f"found 2,097,152 bytes, sha256 {hashlib.sha256(b'x' + BIG[1:]).hexdigest()}): "
        f"truncated or edited; restore it from your copy, or fetch a verified one with "
        f"`extractbench data fetch toy --dest {folder}`"
    )
    big.write_bytes(BIG[:1000])  # truncated: named by its size, without hashing
    (folder / "toy" / "a.txt").unlink()
    with pytest.raises(DataMissing, match=r"toy/a.txt: missing .*\(and 1 more file\)$"):
        verify_suite_data(folder, "toy", manifest=manifest, memo=second)
    lines = verify_suite_data(folder, "toy", manifest=manifest, memo=second, allow_changed=True)
    assert len(lines) == 2 and "found 1,000 bytes)" in lines[1]
    assert verify_suite_data(folder, "fda-elsewhere", manifest=manifest) == []  # not listed


def test_an_unwritable_memo_only_costs_time(tmp_path):
    manifest, folder = _toy_manifest(tmp_path)
    (tmp_path / "file").write_text("")
    memo = DigestMemo(tmp_path / "file" / "verified.sqlite")  # its folder is a file
    assert verify_suite_data(folder, "toy", manifest=manifest, memo=memo) == []
    assert memo.hashed == 2


def _cached_fda(tmp_path: Path) -> tuple[Path, Path]:
    """A user data cache holding fda's files (copied from ../shared/data); one of them."""
    cache = tmp_path / "cache"
    for rel in MANIFEST.suites["fda"]:
        (cache / MANIFEST.version / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SHARED / rel, cache / MANIFEST.version / rel)
    return cache, cache / MANIFEST.version / "fda" / "docs" / "K153137_REVIEW.md"


@needs_data
@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_offline_a_truncated_file_of_the_user_cache_is_a_usage_error_naming_it(
    repo, tmp_path, mode
):
    cache, doc = _cached_fda(tmp_path)
    doc.write_bytes(doc.read_bytes()[:1000])
    result = _run(repo, cache, "--offline", *mode)
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr[-2000:]
    entry = MANIFEST.suites["fda"]["fda/docs/K153137_REVIEW.md"]
    line = next(x for x in result.stderr.splitlines() if "K153137_REVIEW.md" in x)
    assert f"{doc}: not the file the data manifest pins (sha256 {entry.sha256}" in line
    assert (
        "found 1,000 bytes): truncated or edited; fetch it again: `extractbench data fetch fda`"
        in line
    )
    assert "Traceback" not in result.stderr + result.stdout


@needs_data
@pytest.mark.parametrize("mode", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_an_edited_file_of_the_data_dir_is_a_usage_error_naming_it(repo, tmp_path, mode):
    cache, doc = _cached_fda(tmp_path)
    data = bytearray(doc.read_bytes())
    data[100] ^= 1  # same size, other bytes
    doc.write_bytes(bytes(data))
    folder = cache / MANIFEST.version
    result = _run(repo, tmp_path / "empty-cache", "--data-dir", str(folder), *mode)
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr[-2000:]
    entry = MANIFEST.suites["fda"]["fda/docs/K153137_REVIEW.md"]
    out = result.stdout + result.stderr  # a collection error: the usage line is in stdout
    assert f"{doc}: not the file the data manifest pins (sha256 {entry.sha256}" in out
    assert f"`extractbench data fetch fda --dest {folder}`" in out and "Traceback" not in out


def test_the_derived_cache_sweeps_temporary_files_of_killed_writers(tmp_path, monkeypatch):
    from extractbench.suites import derived_cache

    folder = tmp_path / "derived"
    folder.mkdir()
    old, young = folder / ".x.json.abc.tmp", folder / ".y.json.def.tmp"
    old.write_text("{")
    young.write_text("{")
    os.utime(old, (time.time() - 7200, time.time() - 7200))
    monkeypatch.setattr("extractbench.suites.files.cache_dir", lambda: tmp_path)
    assert derived_cache.cached_json("t", "k" * 24, lambda: [1]) == [1]
    assert not old.exists() and young.exists()  # a live writer's file stays
    assert derived_cache.cached_json("t", "k" * 24, lambda: [2]) == [1]  # read back
