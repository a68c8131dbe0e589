"""``benchmarks/gpu_throughput.py``'s log: rows measured in several runs (or on another
machine) come back from the JSON-lines log alone (``--report``), a row missing groups is
marked partial, and the answer agreement is counted over the items both rows answered."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("gpu_throughput", ROOT / "benchmarks" / "gpu_throughput.py")  # fmt: skip
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_throughput"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("gpu_throughput", None)


def _items():
    """Two groups: g1 with two keys, g2 with one; references are the right answers."""
    make = lambda group, key, ref: SimpleNamespace(id=f"{group}/{key}", group=group, reference=ref)  # noqa: E731
    return [make("g1", "a", "Roche"), make("g1", "b", "K103402"), make("g2", "c", "Class II")]


def _write(path: Path, parts: list[dict]) -> None:
    path.write_text("".join(json.dumps(p) + "\n" for p in parts), encoding="utf-8")


def _part(row, group, ids, texts, seconds, **extra):
    tokens = [len(t.split()) for t in texts]
    return {"row": row, "group": group, "ids": ids, "texts": texts, "tokens": tokens, "seconds": seconds, **extra}  # fmt: skip


def test_rows_come_back_from_the_log_with_partial_rows_marked(bench, tmp_path):
    log_path = tmp_path / "gpu.jsonl"
    _write(log_path, [
        _part("hf batch 1", "g1", ["g1/a", "g1/b"], [" Roche Diagnostics", " none"], 2.0, batches={"1": 2}),  # noqa: E501
        _part("hf batch 1", "g2", ["g2/c"], [" Class II"], 1.0, batches={"1": 1}),
        _part("hf batch 8", "g1", ["g1/a", "g1/b"], [" Roche Diagnostics", " K103402"], 0.5, batches={"2": 1}),  # noqa: E501
        {"row": bench.LM_EVAL, "group": "*", "result": {"wall_s": 9.0, "ids": ["g1/a"], "texts": [" Roche"]}},  # noqa: E501
    ])  # fmt: skip
    runs = bench.Log(log_path).rows(_items())
    assert set(runs) == {"hf batch 1", "hf batch 8", bench.LM_EVAL}
    full, part = runs["hf batch 1"], runs["hf batch 8"]
    assert (full["items"], full["wall_s"], full["accuracy"]) == (3, 3.0, round(2 / 3, 4))
    assert "partial" not in full and full["batches"] == {"1": 3}
    assert part["partial"] == "1 of 2 groups" and part["items"] == 2 and part["accuracy"] == 1.0
    assert part["items_per_s"] == 4.0  # 2 items in 0.5 s: the groups it finished, not all
    differing = bench.agreement(runs)
    assert part["same_as_hf_batch_1"] == "1/2"  # counted over the items both answered
    assert runs[bench.LM_EVAL]["same_as_hf_batch_1"] == "0/1"
    assert differing["hf batch 8"] == [{"id": "g1/b", "batch 1": " none", "hf batch 8": " K103402"}]  # fmt: skip


def test_an_empty_log_gives_no_rows(bench, tmp_path):
    assert bench.Log(tmp_path / "missing.jsonl").rows(_items()) == {}


def test_a_line_that_is_not_the_logs_is_one_error_naming_it(bench, tmp_path):
    log_path = tmp_path / "gpu.jsonl"
    log_path.write_text(json.dumps(_part("hf batch 1", "g2", ["g2/c"], [" x"], 1.0)) + "\n{oops\n")
    with pytest.raises(SystemExit) as info:
        bench.Log(log_path)
    assert str(info.value).startswith(f"error: {log_path}:2: not a line of this log")


def test_the_gpu_row_against_the_cpu_row_as_a_gate_states_it(bench, tmp_path):
    log_path = tmp_path / "agree.jsonl"
    _write(log_path, [
        _part("llama-cpp gpu", "g1", ["g1/a", "g1/b"], [" Roche", " K103402"], 0.1),
        _part("llama-cpp gpu", "g2", ["g2/c"], [" Class I"], 0.1),
        _part("llama-cpp cpu", "g1", ["g1/a", "g1/b"], [" Roche", " K10"], 1.0),
        _part("llama-cpp cpu", "g2", ["g2/c"], [" Class II"], 1.0),
    ])  # fmt: skip
    runs = bench.Log(log_path).rows(_items())
    agree = bench.gpu_cpu_agreement(runs, _items())
    assert agree["n"] == 3 and agree["identical"] == 1
    assert (agree["a_only"], agree["b_only"]) == (1, 1) and agree["difference"] == 0.0
    assert agree["contains_zero"] and agree["mcnemar_p"] == 1.0
    assert bench.gpu_cpu_agreement({"llama-cpp gpu": runs["llama-cpp gpu"]}, _items()) is None
