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
  space is capped at ``--lm-eval-memory-gb`` on the CPU (its batch-size probe allocates
  logits for ``max_batch_size`` x ``max_length`` tokens; the cap makes an allocation that
  would not fit fail, which lm-eval takes as out of memory and halves). On a GPU the card's
  own out-of-memory error does that, and no cap is set (CUDA reserves far more address
  space than it uses).

Each row: wall seconds (model load excluded, printed apart), items/s, generated tokens/s
(the model's own completion tokens; lm-eval's counted with the tokenizer), accuracy
(containment), and how many answers equal ``hf batch 1``'s and ``llama-cpp cpu``'s; and
``gpu_cpu_agreement``: the GPU row against the CPU row as a release gate needs it (identical
answers, the paired accuracy difference with its 95% interval, the exact McNemar p-value;
:mod:`plugins.verdict.agreement`).

The in-process rows run group by group, every row on a group before the next group (so a
run cut short still compares the rows on the groups it finished), and each (row, group) is
appended to ``--log`` (JSON lines: answers, tokens, seconds) as soon as it is done; a run
given the same ``--log`` again skips what the log holds. The summary is computed from the
log: a row not finished on every group is marked partial, and the answer agreement is
counted over the items both rows answered; ``--report`` prints that summary from the log
alone (rows measured in several runs, or on another machine). ``--skip`` leaves rows out
(``llama-gpu``, ``llama-cpu``, ``llama``, ``hf``, ``lm-eval``). The exit status is 1 when a
row it ran failed (its error is in the summary) or no row was asked for. Run (niced; hours
on 2 busy cores):

    nice python benchmarks/gpu_throughput.py --items 100 --device cpu --threads 2 --log reports/gpu-throughput.jsonl
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

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.fixtures.models.hf.settings import DTYPES  # noqa: E402
from extractbench.fixtures.models.routing import routing  # noqa: E402
from extractbench.plugins.run.selection import rank  # noqa: E402
from extractbench.suites.fda.items import load_items  # noqa: E402
from extractbench.suites.fda.metrics import containment  # noqa: E402
from extractbench.suites.model import Generation, Request  # noqa: E402
from extractbench.suites.model_files import default_model_path  # noqa: E402


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


class Log:
    """The (row, group) results of a run, appended to a JSON-lines file as each is done and
    read back by a run given the same file (nothing measured is lost to a stop)."""

    def __init__(self, path: Path | None) -> None:
        self.path, self.parts = path, {}
        if path is not None and path.is_file():
            lines = path.read_text(encoding="utf-8").splitlines()
            for number, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    part = json.loads(line)
                    self.parts[(part["row"], part["group"])] = part
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    raise SystemExit(
                        f"error: {path}:{number}: not a line of this log ({exc})"
                    ) from None

    def has(self, name: str, group: str) -> bool:
        return (name, group) in self.parts

    def add(self, name: str, group: list, out: list[Generation], seconds: float, **extra: Any) -> None:  # fmt: skip
        part = {
            "row": name, "group": group[0].group, "ids": [it.id for it in group],
            "texts": [g.text for g in out], "tokens": [g.completion_tokens for g in out],
            "seconds": round(seconds, 3), **extra,
        }  # fmt: skip
        self.parts[(name, part["group"])] = part
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(part) + "\n")
        print(name, part["group"], f"{len(out)} items {seconds:.1f} s", file=sys.stderr, flush=True)

    def row(self, name: str, items: list, **extra: Any) -> dict | None:
        """The row over the groups logged for it (None: none); ``partial`` when some
        group of ``items`` is missing."""
        groups = [g for g in groups_of(items) if self.has(name, g[0].group)]
        if not groups:
            return None
        done = [it for g in groups for it in g]
        parts = [self.parts[(name, g[0].group)] for g in groups]
        made = [Generation(t, 0, n, 0.0) for p in parts for t, n in zip(p["texts"], p["tokens"], strict=True)]  # fmt: skip
        result = row(done, made, sum(p["seconds"] for p in parts), **extra)
        result["ids"] = [it.id for it in done]
        batches: dict[str, int] = {}
        for p in parts:
            for size, n in p.get("batches", {}).items():
                batches[size] = batches.get(size, 0) + n
        if batches:
            result["batches"] = batches
        if len(done) < len(items):
            result["partial"] = f"{len(groups)} of {len(groups_of(items))} groups"
        return result

    def rows(self, items: list) -> dict[str, dict]:
        """Every row the log holds, over ``items`` (``--report``: nothing is run)."""
        names = sorted({name for name, group in self.parts if group != "*"})
        runs = {name: self.row(name, items) for name in names}
        if self.has(LM_EVAL, "*"):
            runs[LM_EVAL] = self.parts[(LM_EVAL, "*")]["result"]
        return {name: result for name, result in runs.items() if result is not None}


def llama_backend(path: Path, threads: int, layers: str) -> Any:
    from extractbench.fixtures.models.llama_cpp.backend import LlamaCppBackend
    from extractbench.fixtures.models.llama_cpp.gpu import LlamaCppOptions

    settings = LlamaCppOptions(n_gpu_layers=layers)
    return LlamaCppBackend(path, n_ctx=4096, n_threads=threads, settings=settings)


def llama_group(backend: Any, group: list) -> list[Generation]:
    """A group's items one after the other, from an empty KV cache (as in a run)."""
    with routing(group[0].group):
        return [backend.generate(it.prompt, max_tokens=it.max_tokens, stop=it.stop) for it in group]  # fmt: skip


def hf_group(backend: Any, base: Any, mode: str, group: list) -> list[Generation]:
    """A group through transformers: ``1`` each prompt alone and whole, ``N``/``auto``
    left-padded batches, ``reuse`` the chunk computed once and each key continued."""
    if mode == "1":
        return [backend.generate(it.prompt, max_tokens=it.max_tokens, stop=it.stop) for it in group]  # fmt: skip
    reuse = mode == "reuse"
    size = None if mode == "auto" else 1 if reuse else int(mode)
    backend.placement = replace(base, batch_size=size, prefix_reuse=reuse)
    requests = [Request(it.prompt, it.max_tokens, it.stop, prefix=str(it.prefix)) for it in group]
    return backend.generate_batch(requests)


def hf_name(mode: str) -> str:
    return "hf prefix reuse" if mode == "reuse" else f"hf batch {mode}"


def in_process_rows(path: Path, items: list, args: argparse.Namespace, log: Log) -> dict:
    """Every in-process row, group by group (each row on a group before the next group),
    each (row, group) logged as it is done; the rows over what the log holds."""
    from extractbench.fixtures.models.llama_cpp.gpu import supports_gpu_offload

    loads: dict[str, float] = {}
    runners: dict[str, Any] = {}  # row name -> (group -> generations)
    # --skip name -> (row, layers offloaded), the GPU row first (it is the short one)
    llama = {"llama-gpu": ("llama-cpp gpu", "all"), "llama-cpu": ("llama-cpp cpu", "0")}
    llama = {} if "llama" in args.skip else {k: v for k, v in llama.items() if k not in args.skip}
    no_offload = "llama-gpu" in llama and not supports_gpu_offload()
    if no_offload:
        del llama["llama-gpu"]
    for name, layers in llama.values():
        start = time.perf_counter()
        backend = llama_backend(path, args.threads, layers)
        loads[name] = round(time.perf_counter() - start, 1)
        runners[name] = lambda g, b=backend: llama_group(b, g)
    if "hf" not in args.skip:
        from extractbench.fixtures.models.hf.backend import HFBackend
        from extractbench.fixtures.models.hf.settings import HFOptions

        start = time.perf_counter()
        settings = HFOptions(device=args.device, dtype=args.dtype)
        hf = HFBackend(path, n_threads=args.threads, settings=settings)
        loaded = round(time.perf_counter() - start, 1)
        base = hf.placement
        for mode in args.hf_modes.split(","):
            loads[hf_name(mode)] = loaded
            runners[hf_name(mode)] = lambda g, m=mode: hf_group(hf, base, m, g)
    for group in groups_of(items):
        for name, run in runners.items():
            if log.has(name, group[0].group):
                continue
            if name.startswith("hf"):
                hf.batch_sizes.clear()
            start = time.perf_counter()
            out = run(group)
            extra = {"batches": {str(k): v for k, v in hf.batch_sizes.items()}} if name.startswith("hf") else {}  # fmt: skip
            log.add(name, group, out, time.perf_counter() - start, **extra)
    rows = {}
    for name in runners:
        rows[name] = log.row(name, items, load_s=loads[name]) or {"error": "no group done"}
    if no_offload:
        rows["llama-cpp gpu"] = {"not_measured": "this llama.cpp build has no GPU offload"}
    return rows


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
        dtype=spec["dtype"], max_length=spec["max_length"], max_batch_size=spec["max_batch_size"],
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


def lm_eval_dtype(args: argparse.Namespace) -> str:
    """lm-eval's dtype: ``--dtype``, or what ``--dtype auto`` gives our hf rows for a GGUF
    file (float32 on every device), so both run the same arithmetic."""
    return "float32" if args.dtype == "auto" else args.dtype


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
        "dtype": lm_eval_dtype(args),
    }  # fmt: skip
    (folder / "spec.json").write_text(json.dumps(spec))
    cap = int(args.lm_eval_memory_gb * 2**30)

    def limit() -> None:
        if args.device == "cpu" and cap > 0:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    command = [sys.executable, __file__, "--lm-eval-child", str(folder / "spec.json")]
    start = time.perf_counter()
    done = subprocess.run(command, preexec_fn=limit, capture_output=True, text=True, check=False)  # noqa: PLW1509
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-4000:])  # the child's traceback, for the log
        return {"error": done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]}
    got = json.loads(Path(spec["out"]).read_text())
    texts = [got["predictions"][it.id] for it in items]
    tokens = [len(tok(t, add_special_tokens=False)["input_ids"]) for t in texts]
    made = [Generation(t, 0, n, 0.0) for t, n in zip(texts, tokens, strict=True)]
    result = row(items, made, got["wall_s"], load_s=got["load_s"], process_s=round(wall, 1))
    result.update(
        batch_sizes=got["batch_sizes"], max_length=spec["max_length"], dtype=spec["dtype"]
    )
    return result


LM_EVAL = "lm-eval hf auto"
SKIPPABLE = ("llama", "llama-gpu", "llama-cpu", "hf", "lm-eval")


def answers(result: dict) -> dict[str, str]:
    """Item id -> answer of a row (empty for a row that failed)."""
    return dict(zip(result.get("ids", []), result.get("texts", []), strict=True))


def agreement(runs: dict[str, dict]) -> dict[str, list[dict]]:
    """Adds ``same_as_hf_batch_1`` / ``same_as_llama-cpp_cpu`` to each row (``n/m``: equal
    answers over the items both rows answered); returns each hf row's answers that differ
    from batch 1's."""
    differing: dict[str, list[dict]] = {}
    for ref in ("hf batch 1", "llama-cpp cpu"):
        reference = answers(runs.get(ref, {}))
        if not reference:
            continue
        for name, result in runs.items():
            mine = answers(result)
            shared = [i for i in mine if i in reference]
            if shared:
                same = sum(mine[i] == reference[i] for i in shared)
                result[f"same_as_{ref.replace(' ', '_')}"] = f"{same}/{len(shared)}"
            if ref == "hf batch 1" and name.startswith("hf") and name != ref:
                differing[name] = [
                    {"id": i, "batch 1": reference[i], name: mine[i]}
                    for i in shared
                    if mine[i] != reference[i]
                ]
    return differing


def gpu_cpu_agreement(runs: dict[str, dict], items: list) -> dict | None:
    """``llama-cpp gpu`` against ``llama-cpp cpu`` as a release gate states it: identical
    answers, each accuracy, and the paired difference with its 95% interval and the exact
    McNemar p-value (:func:`plugins.verdict.agreement.paired_agreement`); None unless both
    rows answered."""
    from extractbench.plugins.verdict.agreement import paired_agreement

    gpu, cpu = answers(runs.get("llama-cpp gpu", {})), answers(runs.get("llama-cpp cpu", {}))
    if not gpu or not cpu or not set(gpu) & set(cpu):
        return None
    reference = {it.id: it.reference for it in items}
    score = lambda texts: {i: containment(t, reference[i]) for i, t in texts.items()}  # noqa: E731
    return paired_agreement(score(gpu), score(cpu), gpu, cpu).to_dict()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--device", default="cpu", help="hf and lm-eval device (cpu, cuda)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--dtype", default="auto", choices=DTYPES, help="hf and lm-eval dtype (auto: float32, as --backend "
        "hf's --dtype auto for a GGUF file)",
    )  # fmt: skip
    parser.add_argument("--model", default=None, help="a GGUF file (default: Gemma 3 270M)")
    parser.add_argument(
        "--hf-modes",
        default="1,4,8,auto,reuse",
        help="transformers rows: 1 (each prompt alone), N or auto (batches), reuse (shared prefix)",
    )
    parser.add_argument(
        "--skip", default="", help="comma list of rows to leave out: " + ", ".join(SKIPPABLE)
    )
    parser.add_argument("--lm-eval-max-batch", type=int, default=64, help="lm-eval's own default")
    parser.add_argument(
        "--lm-eval-memory-gb", type=float, default=12.0,
        help="address-space cap of lm-eval's child on --device cpu (0: none; never on a GPU)",
    )  # fmt: skip
    parser.add_argument("--lm-eval-child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--log", default=None, help="JSON-lines file: each (row, group) appended when done; "
        "a run given it again skips what it holds",
    )  # fmt: skip
    parser.add_argument(
        "--report", action="store_true",
        help="run nothing: print the summary of every row the --log holds (rows measured "
        "in several runs, on another machine, or stopped)",
    )  # fmt: skip
    args = parser.parse_args()
    args.skip = {s for s in args.skip.split(",") if s}
    if args.skip - set(SKIPPABLE):
        parser.error(
            f"--skip {','.join(sorted(args.skip - set(SKIPPABLE)))}: choose from {', '.join(SKIPPABLE)}"
        )
    if args.lm_eval_child:
        return lm_eval_child(args)
    path = Path(args.model) if args.model else default_model_path()
    data_dir = require_data_dir(args.data_dir)
    items = select_groups(load_items(data_dir).items, args.items)
    log = Log(Path(args.log) if args.log else None)
    if args.report:
        if log.path is None or not log.parts:
            parser.error("--report needs a --log file that holds rows")
        runs = log.rows(items)
    else:
        runs = in_process_rows(path, items, args, log)
    if "lm-eval" not in args.skip and not args.report:
        if log.has(LM_EVAL, "*"):
            runs[LM_EVAL] = log.parts[(LM_EVAL, "*")]["result"]
        else:
            with tempfile.TemporaryDirectory() as folder:
                runs[LM_EVAL] = lm_eval_run(path, items, args, Path(folder))
            runs[LM_EVAL]["ids"] = [it.id for it in items]
            if log.path is not None and "error" not in runs[LM_EVAL]:
                with log.path.open("a", encoding="utf-8") as fh:
                    fh.write(
                        json.dumps({"row": LM_EVAL, "group": "*", "result": runs[LM_EVAL]}) + "\n"
                    )
        _progress(LM_EVAL, runs[LM_EVAL])
    differing = agreement(runs)  # adds same_as_* to each row first
    summary = {
        "items": len(items),
        "groups": len(groups_of(items)),
        "model": path.name,
        "threads": args.threads,
        "runs": {
            k: {f: v for f, v in r.items() if f not in ("texts", "ids")} for k, r in runs.items()
        },
        "hf_differences": differing,
        "gpu_cpu_agreement": gpu_cpu_agreement(runs, items),
    }
    print(json.dumps(summary, indent=1))
    failed = sorted(name for name, result in runs.items() if "error" in result)
    if not runs:
        raise SystemExit("error: no row was asked for (see --skip)")
    if failed:  # the summary above says why; a benchmark that measured less must not exit 0
        raise SystemExit(f"error: {len(failed)} of {len(runs)} rows failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
