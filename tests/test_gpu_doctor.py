"""``extractbench doctor``'s lines: injected GPU facts, and this CPU machine's own."""

from __future__ import annotations

from extractbench.fixtures.models.doctor import Facts, doctor_lines, gather
from extractbench.fixtures.models.gpus import Gpu

H100 = [Gpu(0, "NVIDIA H100 80GB HBM3", 81559, 80100), Gpu(1, "NVIDIA H100 80GB HBM3", 81559)]


def test_a_gpu_machine_reports_offload_devices_and_what_auto_picks():
    facts = Facts(
        llama_version="0.3.36", llama_offload=True, llama_system="CUDA : ARCHS = 900",
        llama_gpus=[Gpu(0, "CUDA0: NVIDIA H100 80GB HBM3", 81559, 80100, "llama.cpp")],
        torch_version="2.13.0+cu128", torch_cuda="12.8", cuda_gpus=H100, bf16=True,
        transformers_version="5.24.0",
    )  # fmt: skip
    text = "\n".join(doctor_lines(facts))
    assert "GPU offload: yes" in text
    assert "--n-gpu-layers auto: auto: every layer" in text
    assert "0: NVIDIA H100 80GB HBM3, 81,559 MiB (80,100 free)" in text
    assert "torch: 2.13.0+cu128, CUDA 12.8" in text
    assert "--device auto: cuda:0, --dtype auto: float32 for a GGUF file" in text
    assert "bfloat16 for a model folder" in text
    assert "worker i uses GPU i mod 2" in text
    assert "for a GPU" not in text


def test_a_cpu_machine_names_the_builds_that_would_use_a_gpu():
    text = "\n".join(doctor_lines(Facts(llama_version="0.3.36", torch_version="2.13.0+cpu")))
    assert "GPU offload: no" in text and "auto: none" in text
    assert 'CMAKE_ARGS="-DGGML_CUDA=on" pip install' in text
    assert "CUDA none (a CPU build)" in text and "download.pytorch.org/whl/cu" in text
    assert "--device auto: cpu, --dtype auto: float32 for a GGUF file" in text
    assert "float32 for a model folder" in text
    assert "no GPU visible" in text


def test_missing_packages_say_how_to_install_them():
    text = "\n".join(doctor_lines(Facts()))
    assert "llama-cpp-python: not installed" in text and "torch: not installed" in text


def test_this_machine():
    facts = gather()
    lines = doctor_lines(facts)
    assert facts.llama_version and any(line.startswith("  system info: ") for line in lines)
    assert any(("GPU offload: yes" in x) or ("GPU offload: no" in x) for x in lines)
