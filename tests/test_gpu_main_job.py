"""benchmarks/gpu_main_job.sh on a machine without a GPU: its rows run a stand-in for
the measuring commands, and the log keeps one line per row as it ends (a row cut at its
budget marked so), a second run skips the rows the log holds, and the report prints the
rows the log lacks as not measured."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

STAND_IN = """#!/bin/sh
# python for the script's own helpers; the measuring rows: the main row sleeps past its budget
case "$1 $2" in
  "- "*|*gpu_main_job_report.py*) exec {python} "$@" ;;
  "-m extractbench.plugins.cli.main") echo "doctor stand-in"; exit 0 ;;
esac
echo "$@" >> {calls}
case "$*" in
  *main.json*) exec sleep 30 ;;
esac
exit 0
"""


def run(tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "OUT": str(tmp_path / "out"), "PYTHON": str(tmp_path / "py"),
           "MAIN_S": "1", "PYTHONPATH": str(ROOT)}  # fmt: skip
    return subprocess.run(["bash", str(ROOT / "benchmarks/gpu_main_job.sh")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_rows_append_to_the_log_and_a_cut_row_is_marked(tmp_path):
    stand_in = tmp_path / "py"
    stand_in.write_text(STAND_IN.format(python=sys.executable, calls=tmp_path / "calls"))
    stand_in.chmod(stand_in.stat().st_mode | stat.S_IEXEC)
    done = run(tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "out/main-job.jsonl").read_text().splitlines()]
    assert [r["row"] for r in rows] == ["main", "serve", "hf", "agree-gpu", "agree-cpu"]
    main = rows[0]
    assert main["cut"] and main["rc"] == 124 and main["wall_s"] < 25
    assert all(r["rc"] == 0 and not r["cut"] for r in rows[1:])
    assert "--n-gpu-layers all" in main["command"] and "--serve" in rows[1]["command"]
    assert "main: exit 124" in done.stdout and "record" in done.stdout  # no record: said so
    calls = (tmp_path / "calls").read_text().splitlines()
    assert len(calls) == 5
    assert (tmp_path / "out/doctor.txt").read_text() == "doctor stand-in\n"
    again = run(tmp_path)  # every row in the log: skipped, the log unchanged
    assert again.stdout.count("already in") == 5
    assert len((tmp_path / "out/main-job.jsonl").read_text().splitlines()) == 5
    assert len((tmp_path / "calls").read_text().splitlines()) == 5


def test_report_of_an_empty_log(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks/gpu_main_job_report.py"),
                           str(tmp_path / "none.jsonl"), str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0
    assert done.stdout.splitlines() == [
        f"{row}: not measured" for row in ("main", "serve", "hf", "agree-gpu", "agree-cpu")
    ]
