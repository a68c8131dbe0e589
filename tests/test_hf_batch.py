"""transformers batching without a model: settings, OOM halving with an injected
out-of-memory error, per-row stopping, the prefix split point."""

from __future__ import annotations

import pytest

from extractbench.fixtures.models.backend_options import options_tag, parse_backend_options
from extractbench.fixtures.models.hf.batch import (
    BatchOutOfMemory,
    StopEach,
    cut_at_stop,
    largest_power_of_two,
    run_in_batches,
)
from extractbench.fixtures.models.hf.prefix import MIN_SHARED, split_point
from extractbench.fixtures.models.hf.settings import (
    HFOptions,
    resolve_placement,
    resolved_options,
)
from extractbench.suites.model import SettingsError


class FakeOOM(Exception):
    """Stands in for torch.OutOfMemoryError."""


def oom_above(limit: int, calls: list[list[int]]):
    def run(indices: list[int]) -> list[str]:
        calls.append(indices)
        if len(indices) > limit:
            raise FakeOOM
        return [f"answer {i}" for i in indices]

    return run


def test_auto_starts_at_the_largest_power_of_two_of_the_group():
    assert [largest_power_of_two(n) for n in (1, 2, 3, 7, 8, 13)] == [1, 2, 2, 4, 8, 8]
    calls: list[list[int]] = []
    results, sizes = run_in_batches(13, None, oom_above(64, calls), oom=(FakeOOM,))
    assert results == [f"answer {i}" for i in range(13)]
    assert sizes == [8, 5] and calls[0] == list(range(8))


def test_auto_halves_on_out_of_memory_and_retries_the_same_prompts():
    calls: list[list[int]] = []
    cleaned: list[bool] = []
    results, sizes = run_in_batches(
        8, None, oom_above(2, calls), oom=(FakeOOM,), cleanup=lambda: cleaned.append(True)
    )
    assert results == [f"answer {i}" for i in range(8)]  # nothing lost, in order
    assert sizes == [2, 2, 2, 2]
    assert calls[:3] == [list(range(8)), list(range(4)), [0, 1]]  # 8, then 4, then 2
    assert len(cleaned) == 2
    # a size known to fit (an earlier group's) is where the next group starts
    calls.clear()
    _, sizes = run_in_batches(8, None, oom_above(2, calls), oom=(FakeOOM,), start=2)
    assert sizes == [2, 2, 2, 2] and len(calls) == 4


def test_fixed_size_or_one_prompt_out_of_memory_is_a_one_line_error():
    with pytest.raises(BatchOutOfMemory, match="--batch-size 4: out of GPU memory") as info:
        run_in_batches(8, 4, oom_above(2, []), oom=(FakeOOM,))
    assert "\n" not in str(info.value)
    with pytest.raises(BatchOutOfMemory, match="on a single prompt"):
        run_in_batches(3, None, oom_above(0, []), oom=(FakeOOM,))


def test_other_errors_are_not_taken_for_out_of_memory():
    def boom(indices: list[int]) -> list[str]:
        raise ValueError("not memory")

    with pytest.raises(ValueError, match="not memory"):
        run_in_batches(4, None, boom, oom=(FakeOOM,))


def test_each_row_stops_at_its_own_stop_limit_or_eos():
    torch = pytest.importorskip("torch", reason="the hf extra: pip install -e '.[hf]'")

    decode = lambda ids: "".join(chr(i) for i in ids if i > 2)  # noqa: E731
    prompt = [[0, 0, 70], [0, 71, 72], [73, 74, 75]]  # left-padded, width 3
    stop = StopEach(3, [5, 2, 5], [("\n",), (), ("Z",)], decode, eos=[1])
    steps = [[ord("a"), ord("b"), 1], [ord("\n"), ord("c"), ord("Z")]]
    done = []
    for n in range(1, 3):
        ids = torch.tensor([row + [s[i] for s in steps[:n]] for i, row in enumerate(prompt)])
        done.append(stop(ids).tolist())
    # step 1: row 2 generated eos; step 2: row 0 "a\n" (stop), row 1 its limit 2
    assert done == [[False, False, True], [True, True, True]]
    assert stop.ended == [2, 2, 1]
    assert cut_at_stop("a\nb", ("\n",)) == "a" and cut_at_stop("xyZw", ("Z", "y")) == "x"


def test_split_point_is_the_shared_tokens_but_never_the_whole_prompt():
    prefix = list(range(100, 100 + 40))
    prompt = prefix[:-1] + [7, 8, 9]  # the tokenizer merged the prefix's last token
    assert split_point(prompt, prefix) == 39
    assert split_point(prefix + [5], prefix) == 40
    assert split_point(prefix, prefix) == 39  # one token left to compute
    assert split_point(prefix[: MIN_SHARED - 1] + [1, 2], prefix) == 0  # too short to pay


def test_settings_parse_and_resolve_without_a_gpu():
    default = HFOptions()
    cpu = resolve_placement(default, cuda_devices=0, mps=False, bf16=False)
    assert (cpu.device, cpu.dtype, cpu.batch_size, cpu.prefix_reuse) == ("cpu", "float32", 1, True)
    assert options_tag(default, resolved_options(cpu)) == ":prefix_reuse=on"
    auto = HFOptions(batch_size="auto")
    batched = resolve_placement(auto, cuda_devices=2, mps=False, bf16=True)
    assert (batched.device, batched.dtype, batched.batch_size) == ("cuda:0", "bfloat16", None)
    assert not batched.prefix_reuse and options_tag(auto, resolved_options(batched)) == (
        ":device=cuda:dtype=bfloat16:batch_size=auto"
    )
    gguf = resolve_placement(default, cuda_devices=1, mps=True, bf16=True, gguf=True)
    assert (gguf.device, gguf.dtype) == ("cuda:0", "float32")  # a GGUF: float32 everywhere
    assert resolve_placement(default, cuda_devices=0, mps=True, bf16=False).dtype == "float16"
    assert resolve_placement(default, cuda_devices=0, mps=True, bf16=False, gguf=True).dtype == (
        "float32"
    )
    explicit = HFOptions(dtype="bfloat16")
    assert resolve_placement(explicit, cuda_devices=1, mps=False, bf16=True, gguf=True).dtype == (
        "bfloat16"
    )
    before = HFOptions(device="cpu", dtype="float32", batch_size=1, prefix_reuse="off")
    placed = resolve_placement(before, cuda_devices=0, mps=False, bf16=False)
    assert options_tag(before, resolved_options(placed)) == ""


@pytest.mark.parametrize(
    ("kwargs", "machine", "fragment"),
    [({"device": "cuda"}, {}, "--device cuda: torch 2.x sees no CUDA GPU"),
     ({"device": "cuda:2"}, {"cuda_devices": 2}, "only 2 CUDA GPU(s) visible"),
     ({"device": "mps"}, {}, "--device mps: this torch has no MPS"),
     ({"device": "tpu"}, None, "--device tpu: choose auto, cpu"),
     ({"dtype": "int8"}, None, "--dtype int8: must be one of auto, float32"),
     ({"batch_size": "0"}, None, "--batch-size 0: choose a number"),
     ({"batch_size": "4", "prefix_reuse": "on"}, None, "use it with --batch-size 1")],
)  # fmt: skip
def test_impossible_settings_are_one_line_errors(kwargs, machine, fragment):
    with pytest.raises(SettingsError) as info:
        settings = parse_backend_options(HFOptions, kwargs)
        found = {"cuda_devices": 0, "mps": False, "bf16": False, **(machine or {})}
        resolve_placement(settings, torch_version="2.x", **found)
    assert fragment in str(info.value) and "\n" not in str(info.value)
