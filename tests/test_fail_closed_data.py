"""Fail closed on data (issue 30): a fetch killed midway leaves no partial file beside the
data, and a data file that changed after it was fetched is an error naming it, its
expected digest and the fix. Every server here is a loopback one the test starts."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from suites.datasets.fetch import STAGING, fetch
from suites.datasets.manifest import load_manifest

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
from suites.datasets.fetch import fetch
from suites.datasets.manifest import load_manifest

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
