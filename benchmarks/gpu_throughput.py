"""Throughput of every way this project runs a model, side by side on the same FDA items.

On the same items (whole FDA chunks, ranked by SHA-256 of their id, taken until at least
``--items``) and the same model file (default: the Gemma 3 270M Q4_K_M GGUF, loaded by
llama.cpp and by transformers through ``gguf_file=``), one after the other in one run:

- ``llama-cpp cpu``: in process, no layer offloaded, default settings (flash attention
  auto), a group's items one after the other (its prefix reused by llama.cpp);
- ``llama-cpp gpu``: every layer offloaded (only where the build can offload);
- ``hf batch 1``: transformers, each prompt alone, whole;
- ``hf batch 8`` / ``hf batch auto``: each group's prompts in left-padded batches;
- ``hf prefix reuse``: each group's chunk computed once, each key continued from it;
- ``lm-eval hf auto``: lm-evaluation-harness's ``hf`` model (``batch_size="auto"``) on
  its own ``fda`` task, its dataset pointed at our items, in a child process whose address
  space is capped at ``--lm-eval-memory-gb`` (on the CPU its batch-size probe allocates
  logits for ``max_batch_size`` x ``max_length`` tokens; the cap makes an allocation that
  would not fit fail, which lm-eval takes as out of memory and halves).

Each row: wall seconds (model load excluded, printed apart), items/s, generated tokens/s
(the model's own completion tokens; lm-eval's counted with the tokenizer), accuracy
(containment), and how many answers equal ``hf batch 1``'s and ``llama-cpp cpu``'s. Run
(niced; hours on 2 busy cores):

    nice python benchmarks/gpu_throughput.py --items 100 --device cpu --threads 2
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fixtures.data import require_data_dir  # noqa: E402
from fixtures.models.routing import routing  # noqa: E402
from plugins.run.selection import rank  # noqa: E402
from suites.fda.items import load_items  # noqa: E402
from suites.fda.metrics import containment  # noqa: E402
from suites.model import Generation, Request  # noqa: E402
from suites.model_files import default_model_path  # noqa: E402


def select_groups(items: list, n: int) -> list:
    """Whole chunks ranked by SHA-256 of the group id until at least ``n`` items (as
    ``benchmarks/lm_eval_compare.py --select groups``), in group order."""
    by_group: dict[str, list] = {}
    for item in items:
        by_group.setdefault(item.group, []).append(item)
    chosen, count = [], 0
    for group in sorted(by_group, key=rank):
        if count >= n:
            break
        chosen.append(group)
        count += len(by_group[group])
    return [it for g in chosen for it in by_group[g]]


def groups_of(items: list) -> list[list]:
    out: dict[str, list] = {}
    for item in items:
        out.setdefault(item.group, []).append(item)
    return list(out.values())


def row(items: list, generations: list[Generation], wall: float, **extra: Any) -> dict:
    tokens = sum(g.completion_tokens for g in generations)
    texts = [g.text for g in generations]
    return {
        "wall_s": round(wall, 1),
        "items": len(items),
        "items_per_s": round(len(items) / wall, 3),
        "generated_tokens": tokens,
        "tokens_per_s": round(tokens / wall, 2),
        "accuracy": round(
            sum(containment(t, it.reference) for t, it in zip(texts, items, strict=True))
            / len(items),
            4,
        ),  # fmt: skip
        "texts": texts,
        **extra,
    }


def llama_run(path: Path, items: list, threads: int, layers: str) -> dict:
    from fixtures.models.llama_cpp import LlamaCppBackend
    from fixtures.models.llama_gpu import parse_llama_settings

    start = time.perf_counter()
    backend = LlamaCppBackend(
        path, n_ctx=4096, n_threads=threads, settings=parse_llama_settings(n_gpu_layers=layers)
    )
    loaded = time.perf_counter() - start
    start = time.perf_counter()
    out = []
    for item in items:
        with routing(item.group):  # a new group starts from an empty KV cache, as in a run
            out.append(backend.generate(item.prompt, max_tokens=item.max_tokens, stop=item.stop))
    return row(items, out, time.perf_counter() - start, load_s=round(loaded, 1), settings=backend.describe())  # fmt: skip


def hf_runs(path: Path, items: list, device: str, threads: int, modes: list[str]) -> dict:
    from fixtures.models.hf import HFBackend
    from fixtures.models.hf_settings import parse_hf_settings

    start = time.perf_counter()
    backend = HFBackend(path, n_threads=threads, settings=parse_hf_settings(device=device))
    loaded = round(time.perf_counter() - start, 1)
    base = backend.placement
    runs = {}
    for mode in modes:
        backend.batch_sizes.clear()
        start = time.perf_counter()
        if mode == "1":  # each prompt alone, whole
            out = [backend.generate(it.prompt, max_tokens=it.max_tokens, stop=it.stop) for it in items]  # fmt: skip
        else:
            reuse = mode == "reuse"
            size = None if mode == "auto" else 1 if reuse else int(mode)
            backend.placement = replace(base, batch_size=size, prefix_reuse=reuse)
            out = []
            for group in groups_of(items):
                out += backend.generate_batch(
                    [
                        Request(it.prompt, it.max_tokens, it.stop, prefix=str(it.prefix))
                        for it in group
                    ]  # fmt: skip
                )
        wall = time.perf_counter() - start
        name = "hf prefix reuse" if mode == "reuse" else f"hf batch {mode}"
        runs[name] = row(items, out, wall, load_s=loaded, batches=dict(backend.batch_sizes), device=base.device, dtype=base.dtype)  # fmt: skip
        _progress(name, runs[name])
    return runs


def _progress(name: str, result: dict) -> None:
    """One finished row on stderr at once (a run takes hours on 2 busy cores)."""
    print(name, json.dumps({k: v for k, v in result.items() if k != "texts"}), file=sys.stderr, flush=True)  # fmt: skip


def lm_eval_child(args: argparse.Namespace) -> None:
    """In the child process: lm-eval's ``hf`` model on its ``fda`` task over our items."""
    import datasets
    from lm_eval import simple_evaluate
    from lm_eval.tasks.fda.task import FDA

    spec = json.loads(Path(args.lm_eval_child).read_text())

    class LocalFDA(FDA):
        """lm-eval's FDA task, its dataset read from our items instead of the hub."""

        def download(self, *unused, **kwargs):  # noqa: ANN002, ANN003
            self.dataset = datasets.load_dataset("json", data_files={"validation": spec["data"]})

    import torch
    from lm_eval.models.huggingface import HFLM

    torch.set_num_threads(spec["threads"])
    path = Path(spec["model"])
    start = time.perf_counter()
    lm = HFLM(
        pretrained=str(path.parent), gguf_file=path.name, device=spec["device"],
        dtype="float32", max_length=spec["max_length"], max_batch_size=spec["max_batch_size"],
        batch_size="auto",
    )  # fmt: skip
    loaded = time.perf_counter()
    detected: list[int] = []
    probe = lm._detect_batch_size

    def recorded(*a, **k):  # noqa: ANN002, ANN003, ANN202 - lm-eval's own signature
        size = probe(*a, **k)
        detected.append(size)
        return size

    lm._detect_batch_size = recorded
    results = simple_evaluate(model=lm, tasks=[LocalFDA()], log_samples=True, bootstrap_iters=0)
    (samples,) = results["samples"].values()
    out = {
        "load_s": round(loaded - start, 1),
        "wall_s": round(time.perf_counter() - loaded, 1),
        "batch_sizes": detected,
        "predictions": {s["doc"]["id"]: s["resps"][0][0] for s in samples},
    }
    Path(spec["out"]).write_text(json.dumps(out))


def lm_eval_run(path: Path, items: list, args: argparse.Namespace, folder: Path) -> dict:
    """lm-eval in a child process (address space capped, ``--threads`` torch threads);
    its wall time from the model loaded to the last answer (its batch-size probe
    included), its load time apart, as for the other rows."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(
        str(path.parent), gguf_file=path.name, local_files_only=True
    )
    longest = max(len(tok(it.prompt)["input_ids"]) for it in items)
    data = folder / "fda-items.json"
    data.write_text(json.dumps([{"id": it.id, "text": it.prompt, "value": it.reference} for it in items]))  # fmt: skip
    spec = {
        "model": str(path), "data": str(data), "out": str(folder / "lm-eval.json"),
        "device": args.device, "max_length": -(-(longest + 64) // 256) * 256,
        "max_batch_size": args.lm_eval_max_batch, "threads": args.threads,
    }  # fmt: skip
    (folder / "spec.json").write_text(json.dumps(spec))
    cap = int(args.lm_eval_memory_gb * 2**30)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    command = [sys.executable, __file__, "--lm-eval-child", str(folder / "spec.json")]
    start = time.perf_counter()
    done = subprocess.run(command, preexec_fn=limit, capture_output=True, text=True, check=False)  # noqa: PLW1509
    wall = time.perf_counter() - start
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]}
    got = json.loads(Path(spec["out"]).read_text())
    texts = [got["predictions"][it.id] for it in items]
    tokens = [len(tok(t, add_special_tokens=False)["input_ids"]) for t in texts]
    made = [Generation(t, 0, n, 0.0) for t, n in zip(texts, tokens, strict=True)]
    result = row(items, made, got["wall_s"], load_s=got["load_s"], process_s=round(wall, 1))
    result.update(batch_sizes=got["batch_sizes"], max_length=spec["max_length"])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--device", default="cpu", help="hf and lm-eval device (cpu, cuda)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", default=None, help="a GGUF file (default: Gemma 3 270M)")
    parser.add_argument("--hf-modes", default="1,8,auto,reuse")
    parser.add_argument("--skip", default="", help="comma list of: llama, hf, lm-eval")
    parser.add_argument("--lm-eval-max-batch", type=int, default=64, help="lm-eval's own default")
    parser.add_argument("--lm-eval-memory-gb", type=float, default=12.0)
    parser.add_argument("--lm-eval-child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    if args.lm_eval_child:
        return lm_eval_child(args)
    from fixtures.models.llama_gpu import supports_gpu_offload

    path = Path(args.model) if args.model else default_model_path()
    data_dir = require_data_dir(args.data_dir, ROOT)
    items = select_groups(load_items(data_dir).items, args.items)
    runs: dict[str, dict] = {}
    if "llama" not in args.skip:
        runs["llama-cpp cpu"] = llama_run(path, items, args.threads, "0")
        _progress("llama-cpp cpu", runs["llama-cpp cpu"])
        if supports_gpu_offload():
            runs["llama-cpp gpu"] = llama_run(path, items, args.threads, "all")
        else:
            runs["llama-cpp gpu"] = {
                "error": "not measured: this llama.cpp build has no GPU offload"
            }
    if "hf" not in args.skip:
        runs.update(hf_runs(path, items, args.device, args.threads, args.hf_modes.split(",")))
    if "lm-eval" not in args.skip:
        with tempfile.TemporaryDirectory() as folder:
            runs["lm-eval hf auto"] = lm_eval_run(path, items, args, Path(folder))
        _progress("lm-eval hf auto", runs["lm-eval hf auto"])
    reference = {name: runs[name]["texts"] for name in ("hf batch 1", "llama-cpp cpu") if "texts" in runs.get(name, {})}  # fmt: skip
    for result in runs.values():
        for name, texts in reference.items():
            if "texts" in result:
                result[f"same_as_{name.replace(' ', '_')}"] = sum(a == b for a, b in zip(result["texts"], texts, strict=True))  # fmt: skip
    differing = {}
    if "hf batch 1" in reference:
        for name, result in runs.items():
            if name.startswith("hf") and "texts" in result:
                differing[name] = [
                    {"id": it.id, "batch 1": a, name: b}
                    for it, a, b in zip(
                        items, reference["hf batch 1"], result["texts"], strict=True
                    )
                    if a != b
                ]
    summary = {
        "items": len(items),
        "groups": len(groups_of(items)),
        "model": path.name,
        "threads": args.threads,
        "runs": {k: {f: v for f, v in r.items() if f != "texts"} for k, r in runs.items()},
        "hf_differences": differing,
    }
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
