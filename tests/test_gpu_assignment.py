"""One GPU per worker, tested with injected device lists (no GPU needed)."""

from __future__ import annotations

import pytest

from extractbench.fixtures.models.gpus import (
    Gpu,
    assign_gpu,
    parse_gpus,
    pin_gpu,
    plan_workers,
)
from extractbench.fixtures.models.llama_cpp.devices import llama_devices
from extractbench.suites.model import SettingsError

FOUR = [Gpu(i, "NVIDIA H100 80GB HBM3", 81559) for i in range(4)]


def test_worker_i_uses_gpu_i_mod_k():
    picked = [assign_gpu(i, 8, FOUR)[0].index for i in range(8)]
    assert picked == [0, 1, 2, 3, 0, 1, 2, 3]
    device, warning = assign_gpu(2, 4, FOUR)
    assert device.index == 2 and warning is None


def test_allowed_set_limits_the_gpus():
    allowed = parse_gpus("1,3")
    assert [assign_gpu(i, 2, FOUR, allowed)[0].index for i in range(2)] == [1, 3]
    assert [assign_gpu(i, 4, FOUR, allowed)[0].index for i in range(4)] == [1, 3, 1, 3]


def test_more_workers_than_gpus_share_them_with_one_warning_line():
    device, warning = assign_gpu(5, 8, FOUR[:2])
    assert device.index == 1
    assert warning is not None and "\n" not in warning
    assert warning.startswith("8 workers share 2 GPU(s)") and "-n 2" in warning


def test_no_gpu_means_the_cpu_without_a_warning():
    assert assign_gpu(0, 8, []) == (None, None)


def test_a_gpu_that_is_not_visible_is_a_one_line_error():
    with pytest.raises(SettingsError, match=r"--gpus: GPU 7 is not visible \(visible: 0, 1\)"):
        assign_gpu(0, 2, FOUR[:2], parse_gpus("0,7"))
    with pytest.raises(SettingsError, match="--gpus 0,x: not a list"):
        parse_gpus("0,x")
    assert parse_gpus("") is None and parse_gpus(None) is None


def test_pin_in_a_worker_narrows_cuda_visible_devices():
    env: dict[str, str] = {}
    pin = pin_gpu(FOUR[2], in_worker=True, environ=env)
    assert env == {"CUDA_VISIBLE_DEVICES": "2"} and pin.local_index == 0
    # the user's own CUDA_VISIBLE_DEVICES: index 1 of "4,6" is physical GPU 6
    env = {"CUDA_VISIBLE_DEVICES": "4,6"}
    pin = pin_gpu(FOUR[1], in_worker=True, environ=env)
    assert env["CUDA_VISIBLE_DEVICES"] == "6" and pin.cuda_visible_devices == "6"


def test_pin_without_xdist_passes_the_index_and_sets_nothing():
    env: dict[str, str] = {}
    pin = pin_gpu(FOUR[3], in_worker=False, environ=env)
    assert env == {} and pin.local_index == 3
    metal = Gpu(0, "Metal: Apple M3", 16384, source="llama.cpp")
    assert pin_gpu(metal, in_worker=True, environ=env).local_index == 0 and env == {}
    assert pin_gpu(None, in_worker=True, environ=env).local_index is None


def test_llama_cpp_device_list_of_this_build_has_no_cpu_entries():
    """The installed build's registry (a CPU build here: no GPU; a GPU build lists only
    GPUs, with their memory)."""
    for device in llama_devices():
        assert device.source == "llama.cpp" and not device.name.startswith("CPU")
        assert device.memory_total_mib is not None and device.memory_total_mib > 0


def test_controller_plan_travels_to_each_worker_and_is_pinned_there():
    plan, warning = plan_workers(3, FOUR[:2])
    assert [g.index for g in plan] == [0, 1, 0] and warning.startswith("3 workers share 2")
    env: dict[str, str] = {}
    sent = plan[2].to_dict()  # what the controller puts in the worker's workerinput
    pin = pin_gpu(Gpu.from_dict(sent), in_worker=True, environ=env)
    assert env["CUDA_VISIBLE_DEVICES"] == "0" and pin.device == FOUR[0]
    assert plan_workers(2, []) == ([None, None], None)


def test_the_shared_gpu_module_probes_no_backends_devices():
    """Each backend lists its own GPUs (``BackendKind.gpu_devices``, in its folder): the
    module every backend shares imports neither torch nor llama-cpp-python."""
    import ast
    from pathlib import Path

    import extractbench.fixtures.models.gpus as shared

    tree = ast.parse(Path(shared.__file__).read_text(encoding="utf-8"))
    imported = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }  # fmt: skip
    assert not {m.split(".")[0] for m in imported} & {"torch", "llama_cpp"}
