"""The derived-data cache under processes collecting at once (xdist workers): an entry is
derived by one of them while the others wait, and every one reads the same value."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DERIVE = """
import json, sys, time
from extractbench.suites.derived_cache import cached_json

def compute():
    with open(sys.argv[1], "a") as log:
        log.write("derived\\n")
    time.sleep(1.0)  # long enough for the other processes to arrive meanwhile
    return {"rows": [1, 2, 3]}

print(json.dumps(cached_json("test-entry", "k" * 64, compute)))
"""


def test_processes_collecting_at_once_derive_an_entry_once(tmp_path):
    log = tmp_path / "computed.txt"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", DERIVE, str(log)], env=env, text=True,
                              stdout=subprocess.PIPE) for _ in range(3)]  # fmt: skip
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert [json.loads(o) for o in outs] == [{"rows": [1, 2, 3]}] * 3
    assert log.read_text().splitlines() == ["derived"]  # once, not once per process
