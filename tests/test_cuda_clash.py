"""CUDA llama-cpp-python and CUDA torch in one process (fixtures/models/hf/cuda_clash.py):
the decision on every combination, the refusal in a process shaped like the one that
aborted (fake packages carrying the CUDA libraries' file names), and, where both CUDA
builds and a GPU are installed, the real libraries in the order the plugin loads them."""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from extractbench.fixtures.models.hf import cuda_clash
from extractbench.fixtures.models.hf.cuda_clash import Loaded, decide

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("flags", list(itertools.product([False, True], repeat=4)))
def test_only_cuda_llama_loaded_before_cuda_torch_is_refused(flags):
    loaded = Loaded(*flags)
    refusal = decide(loaded)
    assert (refusal is not None) == (flags == (True, True, True, False))
    if refusal:
        assert "\n" not in refusal and "free(): invalid pointer" in refusal


def test_torch_first_raises_the_refusal_and_imports_nothing(monkeypatch):
    monkeypatch.setattr(cuda_clash, "detect", lambda: Loaded(True, True, True, False))
    with pytest.raises(cuda_clash.CudaClashError, match="import torch first"):
        cuda_clash.torch_first()


def fake_packages(folder: Path, llama_lib: str, torch_lib: str) -> None:
    for package, lib in (("llama_cpp", llama_lib), ("torch", torch_lib)):
        (folder / package / "lib").mkdir(parents=True)
        (folder / package / "__init__.py").write_text(f"LOADED = {package!r}\n")
        (folder / package / "lib" / lib).write_bytes(b"")


SCRIPT = """
import sys
import llama_cpp
from extractbench.fixtures.models.hf.cuda_clash import CudaClashError, detect, torch_first
print(detect())
try:
    torch_first()
except CudaClashError as exc:
    print("refused:", exc)
    sys.exit(3)
print("torch" in sys.modules)
"""


@pytest.mark.parametrize(
    ("llama_lib", "torch_lib", "refused"),
    [
        ("libggml-cuda.so", "libtorch_cuda.so", True),
        ("libggml-cpu.so", "libtorch_cuda.so", False),
        ("libggml-cuda.so", "libtorch_cpu.so", False),
    ],
)
def test_a_process_with_llama_loaded_first(tmp_path, llama_lib, torch_lib, refused):
    fake_packages(tmp_path, llama_lib, torch_lib)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}"}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, timeout=60)  # fmt: skip
    if refused:
        assert done.returncode == 3, done.stdout + done.stderr
        assert "refused: this process loaded llama-cpp-python's CUDA build" in done.stdout
    else:
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.strip().endswith("True")  # torch imported


def _both_cuda_builds() -> bool:
    loaded = cuda_clash.detect()
    return loaded.llama_cuda and loaded.torch_cuda and shutil.which("nvidia-smi") is not None


REAL = """
import sys
from extractbench.fixtures.models.hf.cuda_clash import torch_first
torch_first()
import torch
import llama_cpp
assert torch.cuda.is_available()
x = torch.ones(4, device="cuda").sum().item()
assert llama_cpp.llama_supports_gpu_offload()
llama_cpp.llama_backend_init()
print("both ran", x)
"""


@pytest.mark.skipif(not _both_cuda_builds(), reason="needs CUDA torch and a CUDA llama-cpp-python")
def test_real_cuda_builds_in_the_plugins_order():
    """torch first, then llama.cpp's CUDA build: both run in one process (the order the
    plugin keeps); a crash here (free(): invalid pointer) is a negative exit status."""
    done = subprocess.run([sys.executable, "-c", REAL], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "both ran 4.0" in done.stdout
