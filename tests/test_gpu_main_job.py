"""benchmarks/gpu_main_job.sh on a machine without a GPU: every row runs its real command
(the product's pytest runs, in process and ``--serve``, and gpu_throughput.py's rows) with
a tiny budget (``--limit 1``, one FDA chunk, ``--n-gpu-layers auto``, no GPU visible), so a
row the product refuses (a usage error, a crash, a failing benchmark) fails here and not on
a rented GPU; each row appends one line to the log, a second run skips the rows the log
holds, and the report prints the rows the log lacks as not measured."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("EXTRACTBENCH_CI_DATA") or ROOT.parent / "shared" / "data")
ROWS = ("main", "serve", "hf", "agree-gpu", "agree-cpu")
CUT = 124  # timeout's status for a row still running at its budget: not refused


def run(out: Path, rows: tuple[str, ...]) -> subprocess.CompletedProcess:
    hf_skip = "lm-eval" if importlib.util.find_spec("lm_eval") is None else ""
    env = {
        **os.environ, "OUT": str(out), "PYTHON": sys.executable, "PYTHONPATH": str(ROOT),
        "EXTRACTBENCH_DATA": str(DATA), "CUDA_VISIBLE_DEVICES": "", "LAYERS": "auto",
        "WORKERS": "2", "THREADS": "2", "ITEMS": "1", "AGREE_ITEMS": "1", "HF_DEVICE": "cpu",
        "HF_SKIP": hf_skip, "ONLY": " ".join(rows),
        "ROW_ARGS": "--limit 1 --suite-option minea.iterations=1",
        "MAIN_S": "60", "SERVE_S": "60", "HF_S": "60", "AGREE_GPU_S": "45", "AGREE_CPU_S": "45",
    }  # fmt: skip
    return subprocess.run(["bash", str(ROOT / "benchmarks/gpu_main_job.sh")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)  # fmt: skip


@pytest.mark.slow
@pytest.mark.skipif(not DATA.is_dir(), reason="needs the pinned data")
def test_every_row_runs_as_written_and_none_is_refused(tmp_path):
    rows = ROWS if importlib.util.find_spec("transformers") else tuple(r for r in ROWS if r != "hf")
    done = run(tmp_path / "out", rows)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    log = tmp_path / "out" / "main-job.jsonl"
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["row"] for r in logged] == list(rows)
    for entry in logged:
        output = Path(entry["output"]).read_text(errors="replace")
        if entry["row"] in ("main", "serve") and entry["rc"] != CUT:
            record = json.loads((tmp_path / "out" / f"{entry['row']}.json").read_text())
            assert record["exit_status"] == entry["rc"] in (0, 1), output[-3000:]  # 1: a gate
            assert not record["usage_errors"] and record["complete"], output[-3000:]
        else:
            assert entry["rc"] in (0, CUT), f"{entry['row']}: exit {entry['rc']}\n{output[-3000:]}"
        if entry["rc"] == CUT:
            assert entry["cut"]
    assert "--n-gpu-layers auto" in logged[0]["command"] and "--serve" in logged[1]["command"]
    again = run(tmp_path / "out", rows)  # every row in the log: skipped, the log unchanged
    assert again.stdout.count("already in") == len(rows)
    assert len(log.read_text().splitlines()) == len(rows)


def test_report_of_an_empty_log(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks/gpu_main_job_report.py"),
                           str(tmp_path / "none.jsonl"), str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0
    assert done.stdout.splitlines() == [f"{row}: not measured" for row in ROWS]
