"""``extractbench doctor``'s lines: injected GPU facts, and this CPU machine's own."""

from __future__ import annotations

from extractbench.fixtures.models.doctor import doctor_lines, worker_line
from extractbench.fixtures.models.gpus import Gpu
from extractbench.fixtures.models.hf import doctor as hf_doctor
from extractbench.fixtures.models.hf.doctor import HFFacts
from extractbench.fixtures.models.llama_cpp import doctor as llama_doctor
from extractbench.fixtures.models.llama_cpp.doctor import LlamaFacts

H100 = [Gpu(0, "NVIDIA H100 80GB HBM3", 81559, 80100), Gpu(1, "NVIDIA H100 80GB HBM3", 81559)]


def _text(llama: LlamaFacts, hf: HFFacts, gpus: list[Gpu]) -> str:
    return "\n".join([*llama_doctor.lines(llama), *hf_doctor.lines(hf), worker_line(gpus)])


def test_a_gpu_machine_reports_offload_devices_and_what_auto_picks():
    llama = LlamaFacts(
        version="0.3.36", offload=True, system="CUDA : ARCHS = 900",
        gpus=[Gpu(0, "CUDA0: NVIDIA H100 80GB HBM3", 81559, 80100, "llama.cpp")],
    )  # fmt: skip
    hf = HFFacts(
        torch_version="2.13.0+cu128", torch_cuda="12.8", cuda_gpus=H100, bf16=True,
        transformers_version="5.24.0",
    )  # fmt: skip
    text = _text(llama, hf, H100)
    assert "GPU offload: yes" in text
    assert "--n-gpu-layers auto: auto: every layer" in text
    assert "0: NVIDIA H100 80GB HBM3, 81,559 MiB (80,100 free)" in text
    assert "torch: 2.13.0+cu128, CUDA 12.8" in text
    assert "--device auto: cuda:0, --dtype auto: float32 for a GGUF file" in text
    assert "bfloat16 for a model folder" in text
    assert "worker i uses GPU i mod 2" in text
    assert "for a GPU" not in text


def test_a_cpu_machine_names_the_builds_that_would_use_a_gpu():
    text = _text(LlamaFacts(version="0.3.36"), HFFacts(torch_version="2.13.0+cpu"), [])
    assert "GPU offload: no" in text and "auto: none" in text
    assert 'CMAKE_ARGS="-DGGML_CUDA=on" pip install' in text
    assert "CUDA none (a CPU build)" in text and "download.pytorch.org/whl/cu" in text
    assert "--device auto: cpu, --dtype auto: float32 for a GGUF file" in text
    assert "float32 for a model folder" in text
    assert "no GPU visible" in text


def test_missing_packages_say_how_to_install_them():
    text = _text(LlamaFacts(), HFFacts(), [])
    assert "llama-cpp-python: not installed" in text and "torch: not installed" in text


def test_this_machine():
    facts = llama_doctor.gather()
    lines = doctor_lines()
    assert facts.version and any(line.startswith("  system info: ") for line in lines)
    assert any(("GPU offload: yes" in x) or ("GPU offload: no" in x) for x in lines)
    assert any(line.startswith("  --weight-repack auto: ") for line in lines)
    assert lines[-1].startswith("one GPU per worker: ")
