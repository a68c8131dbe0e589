"""benchmarks/gpu_diagnose.py without a GPU: it says there is none and still loads the model
in processes of its own (0 layers), a variant cut at the budget is reported as cut (exit
1), and a process's end is named as a person reads it (a signal by its name)."""

from __future__ import annotations

import importlib.util
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from extractbench.fixtures.models.llama_cpp.gpu import supports_gpu_offload

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_diagnose.py"


def diagnose(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)  # fmt: skip


def test_ends_are_named():
    spec = importlib.util.spec_from_file_location("gpu_diagnose", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    assert module.ended(-signal.SIGSEGV) == "SIGSEGV" and module.ended(-signal.SIGABRT) == "SIGABRT"
    assert module.ended(0) == "ok" and module.ended(7) == "exit 7" and module.ended(None) == "cut"


@pytest.mark.skipif(supports_gpu_offload(), reason="this llama.cpp build offloads to a GPU")
def test_without_a_gpu_the_worker_load_runs_on_the_cpu_and_a_cut_is_reported():
    done = diagnose("--only", "worker", "--copies", "1", "--worker-ctx", "1024", "--budget", "200")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("gpu_diagnose: no GPU visible") and "0 layers" in lines[0]
    assert "gpu_diagnose: worker: 1 process(es), 1 ok" in done.stdout
    assert lines[-1] == "gpu_diagnose: 1 of 1 variants loaded and answered"
    # eight processes starting at once on this machine's cores: none loads within 1.5 s
    cut = diagnose("--only", "worker", "--copies", "8", "--worker-ctx", "1024", "--budget", "1.5")
    assert cut.returncode == 1 and "8 cut" in cut.stdout and "not: worker" in cut.stdout
