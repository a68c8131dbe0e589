"""The bundle round trip for real: ``extractbench bundle`` downloads the wheels from the
package index, ``install.py`` installs them into a fresh virtual environment with no index,
and ``pytest suites/fda --limit 3`` runs there on the default model and the bundled data.

Minutes, and it needs the index: it runs where ``EXTRACTBENCH_BUNDLE_ROUNDTRIP=1``, with a
llama-cpp-python wheel for this machine (``EXTRACTBENCH_LLAMA_WHEEL``, else the newest in
pip's wheel cache) so that llama.cpp is not compiled again (``--llama-wheel``); the
source build is ``extractbench server build``'s path, tested in test_server_build.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
PART = 60 << 20


def llama_wheel() -> Path | None:
    given = os.environ.get("EXTRACTBENCH_LLAMA_WHEEL")
    if given:
        return Path(given)
    cached = subprocess.run([sys.executable, "-m", "pip", "cache", "list", "--format", "abspath",
                             "llama_cpp_python"], capture_output=True, text=True)  # fmt: skip
    found = sorted((Path(p) for p in cached.stdout.split()), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


pytestmark = pytest.mark.skipif(
    os.environ.get("EXTRACTBENCH_BUNDLE_ROUNDTRIP") != "1",
    reason="minutes and the package index: set EXTRACTBENCH_BUNDLE_ROUNDTRIP=1",
)


def test_round_trip_into_a_fresh_venv_with_no_index(tmp_path):
    wheel = llama_wheel()
    assert wheel is not None and wheel.is_file(), (
        "no llama-cpp-python wheel: set EXTRACTBENCH_LLAMA_WHEEL"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    made = subprocess.run(
        [sys.executable, "-m", "extractbench.plugins.cli.main", "bundle", "-o", str(tmp_path / "b"),
         "--llama-wheel", str(wheel), "--data-dir", str(DATA)],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800,
    )  # fmt: skip
    assert made.returncode == 0, made.stdout[-2000:] + made.stderr[-2000:]
    manifest = json.loads((tmp_path / "b" / "bundle.json").read_text())
    assert all(p["size"] <= PART for p in manifest["parts"])
    # offline: no index, no pip configuration, nothing of this checkout on the path
    offline = {k: v for k, v in env.items() if not k.startswith("PIP_") and k != "PYTHONPATH"}
    offline |= {"PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull}
    installed = subprocess.run(
        [sys.executable, str(tmp_path / "b" / "install.py"), str(tmp_path / "b"),
         "--venv", str(tmp_path / "venv"), "--no-server"],
        capture_output=True, text=True, env=offline, timeout=1800,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-2000:]
    assert "llama-cpp-python" in installed.stdout  # doctor ran
    source = tmp_path / "b" / "unpacked" / "source"
    run = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "python"), "-m", "pytest", "suites/fda", "--limit", "3",
         "-p", "no:cacheprovider", "--no-step-summary", "--report-json", str(tmp_path / "run.json")],
        capture_output=True, text=True, env=offline, cwd=source, timeout=1800,
    )  # fmt: skip
    assert run.returncode in (0, 1), (
        run.stdout[-3000:] + run.stderr[-2000:]
    )  # 1: a gate may fail on 3 items
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["complete"] and record["counts"]["items"] == 3
