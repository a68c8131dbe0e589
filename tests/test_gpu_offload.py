"""llama.cpp GPU settings without a GPU: the offload decision with an injected "supports
offload" flag, the one-line error naming the CUDA build, the load-log facts, the record's
description, and the CPU build's own behaviour."""

from __future__ import annotations

import pytest

from extractbench.fixtures.models.backend_options import options_tag, parse_backend_options
from extractbench.fixtures.models.gpus import Gpu
from extractbench.fixtures.models.llama_cpp.gpu import (
    CPU_DEFAULTS,
    CUDA_BUILD_COMMAND,
    LlamaCppOptions,
    OffloadUnavailable,
    decide_offload,
    describe_llama,
    parse_load_log,
    resolved_options,
    supports_gpu_offload,
)
from extractbench.suites.model import SettingsError


@pytest.mark.parametrize(
    ("layers", "supported", "expected"),
    [("auto", True, -1), ("auto", False, 0), ("all", True, -1), ("-1", True, -1),
     ("12", True, 12), ("0", True, 0), ("0", False, 0)],
)  # fmt: skip
def test_offload_decision_follows_the_build(layers, supported, expected):
    offload = decide_offload(LlamaCppOptions(n_gpu_layers=layers), supported)
    assert offload.n_gpu_layers == expected
    assert offload.supported is supported


@pytest.mark.parametrize("layers", ["1", "all", "99"])
def test_gpu_layers_on_a_build_without_offload_name_the_cuda_build(layers):
    with pytest.raises(OffloadUnavailable) as info:
        decide_offload(LlamaCppOptions(n_gpu_layers=layers), supported=False)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"--n-gpu-layers {layers}: ")
    assert CUDA_BUILD_COMMAND in message and "--n-gpu-layers 0" in message
    assert isinstance(info.value, SettingsError)  # the plugin's usage error, exit 4


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [({"n_gpu_layers": "some"}, "--n-gpu-layers some"), ({"n_gpu_layers": "-2"}, "-2"),
     ({"flash_attn": "yes"}, "--flash-attn yes: must be one of on, off, auto"),
     ({"n_ubatch": "0"}, "--n-ubatch 0: must be >= 1"),
     ({"main_gpu": "x"}, "--main-gpu x: must be int"),
     ({"main_gpu": "-1"}, "--main-gpu -1: must be >= 0"),
     ({"n_ctx": "8"}, "--n-ctx: not an option of this backend")],
)  # fmt: skip
def test_bad_values_are_one_line_errors(kwargs, fragment):
    with pytest.raises(SettingsError, match=fragment) as info:
        parse_backend_options(LlamaCppOptions, kwargs)
    assert "\n" not in str(info.value)


def fingerprint_tag(settings: LlamaCppOptions, offload) -> str:
    return options_tag(settings, resolved_options(settings, offload))


def test_fingerprint_is_untagged_only_for_the_numerics_before_these_settings():
    off = decide_offload(CPU_DEFAULTS, False)
    assert fingerprint_tag(CPU_DEFAULTS, off) == ""
    default = LlamaCppOptions()  # on a CPU build: the CPU numerics, untagged
    assert fingerprint_tag(default, decide_offload(default, False)) == ""
    assert fingerprint_tag(default, decide_offload(default, True)) == ":n_gpu_layers=all:flash_attn=auto"
    on = LlamaCppOptions(flash_attn="on")
    assert fingerprint_tag(on, decide_offload(on, False)) == ":flash_attn=on"
    ub = LlamaCppOptions(flash_attn="off", n_ubatch=2048)
    assert fingerprint_tag(ub, decide_offload(ub, False)) == ":n_ubatch=2048"


def test_load_log_facts():
    cpu = (
        "llama_context: flash_attn            = auto\nresolve_fused_ops: Flash Attention enabled\n"
    )
    assert parse_load_log(cpu).to_dict() == {
        "flash_attn_resolved": "enabled",
        "layers_offloaded": None,
    }
    gpu = "load_tensors: offloaded 19/19 layers to GPU\nllama_context: flash_attn = disabled\n"
    assert parse_load_log(gpu).to_dict() == {
        "flash_attn_resolved": "disabled",
        "layers_offloaded": "19/19",
    }


def test_description_names_each_gpu_or_cpu():
    gpus = [
        Gpu(0, "CUDA0: NVIDIA H100", 81559, 80000, "llama.cpp"),
        Gpu(1, "CUDA1: NVIDIA H100", 81559),
    ]
    one = LlamaCppOptions(n_gpu_layers="8", main_gpu=1)
    described = describe_llama(one, decide_offload(one, True), 19, gpus)
    assert described["layers_offloaded"] == "8/19" and described["n_gpu_layers"] == "8"
    assert [d["name"] for d in described["devices"]] == ["CUDA1: NVIDIA H100"]
    auto = LlamaCppOptions()
    on_cpu = describe_llama(auto, decide_offload(auto, False), 19, [])
    assert on_cpu["devices"] == "cpu" and on_cpu["layers_offloaded"] == "0/19"
    assert on_cpu["offload_supported"] is False and on_cpu["flash_attn"] == "off"
    on_gpu = describe_llama(auto, decide_offload(auto, True), 19, gpus)
    assert on_gpu["flash_attn"] == "auto" and on_gpu["layers_offloaded"] == "19/19"
    assert len(on_gpu["devices"]) == 2  # layers split over both (no --main-gpu)


def test_this_cpu_build_runs_auto_on_the_cpu_and_refuses_layers():
    """The installed (CPU) llama-cpp-python: the defaults load with no layer offloaded
    and flash attention off, ``--flash-attn on`` turns it on in llama.cpp, and an explicit
    layer count is refused at load."""
    from extractbench.fixtures.models.llama_cpp.backend import LlamaCppBackend
    from extractbench.suites.model_files import default_model_path

    default_gguf = default_model_path()

    if supports_gpu_offload():
        pytest.skip("this llama-cpp-python build offloads: the CPU-build behaviour is not testable")
    backend = LlamaCppBackend(default_gguf, n_ctx=512, n_threads=1, settings=LlamaCppOptions())
    described = backend.describe()
    assert described["offload"].startswith("auto: none") and described["layers_offloaded"] is None
    assert described["flash_attn"] == "off" and described["flash_attn_resolved"] == "disabled"
    on = LlamaCppBackend(
        default_gguf, n_ctx=512, n_threads=1, settings=LlamaCppOptions(flash_attn="on")
    )
    assert on.describe()["flash_attn_resolved"] == "enabled"
    with pytest.raises(OffloadUnavailable, match="CMAKE_ARGS"):
        LlamaCppBackend(
            default_gguf, n_ctx=512, n_threads=1, settings=LlamaCppOptions(n_gpu_layers="1")
        )
