"""FDA on the default model, side by side: ours in process, ours with --serve,
lm-evaluation-harness, and the lower bound. Needs ``pip install "lm-eval[api]"`` (with
torch's CPU build installed first; the ``api`` extra brings what its ``local-completions``
model imports: without it lm-eval fails only when it starts, after our own runs, so the
script checks the imports first) and the ``serve`` extra.

1. ours in process: ``pytest suites/fda -n WORKERS --limit N --no-cache`` (grouped).
2. ours with ``--serve``: the same with one llama-cpp-python server for all workers.
3. lm-evaluation-harness: its ``fda`` task class (lm_eval/tasks/fda/task.py) with its
   dataset pointed at a local JSON file of the same N items (``text`` = our prompt,
   ``value`` = our reference), model ``local-completions`` against a llama-cpp-python
   server of the same GGUF (``num_concurrent`` = WORKERS).
4. the lower bound: unique prompt tokens / measured prefill rate + generated tokens /
   measured decode rate, each rate the best of one process with all cores and WORKERS
   concurrent processes with cores // WORKERS threads each (summed).

Prints wall time, items/s and accuracy of each, and the agreement of ours and
lm-evaluation-harness's generations. Run:

    python benchmarks/lm_eval_compare.py --items 200 --workers 2 [--select groups]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from model_rates import rates_at  # noqa: E402  (benchmarks/model_rates.py)

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.fixtures.models.llama_cpp.serve import MODEL_ALIAS, start_server  # noqa: E402
from extractbench.fixtures.models.openai.backend import LLAMA_CPP_GREEDY  # noqa: E402
from extractbench.plugins.run.selection import rank, stratified_limit  # noqa: E402
from extractbench.suites.fda.items import load_items  # noqa: E402
from extractbench.suites.fda.metrics import containment  # noqa: E402
from extractbench.suites.model_files import default_model_path  # noqa: E402


def select(items: list, n: int, how: str) -> tuple[list, list[str]]:
    """The benchmark's items and the pytest arguments that select exactly them.

    ``stratified``: ``--limit n`` (spread over keys, few items share a chunk).
    ``groups``: whole chunks (all keys of a chunk, as in the full main job), chunks ranked
    by SHA-256 of their id, taken until at least ``n`` items; selected with ``-k``.
    """
    if how == "stratified":
        return stratified_limit(items, n, "key"), ["--limit", str(n)]
    by_group: dict[str, list] = {}
    for item in items:
        by_group.setdefault(item.group, []).append(item)
    chosen: list[str] = []
    count = 0
    for group in sorted(by_group, key=rank):
        if count >= n:
            break
        chosen.append(group)
        count += len(by_group[group])
    keep = set(chosen)
    return [it for it in items if it.group in keep], ["-k", " or ".join(g + "/" for g in chosen)]


def ours(args: argparse.Namespace, out: Path, *extra: str) -> dict:
    command = [
        sys.executable, "-m", "pytest", "suites/fda", "-n", str(args.workers),
        *args.selection, "--no-cache", "-q", "-p", "no:cacheprovider", "--report-json", str(out),
        *extra,
    ]  # fmt: skip
    if args.data_dir:
        command += ["--data-dir", args.data_dir]
    start = time.perf_counter()
    subprocess.run(command, cwd=ROOT, check=False, capture_output=True)
    wall = time.perf_counter() - start
    record = json.loads(out.read_text())
    return {
        "wall_s": round(wall, 1),
        "items_per_s": round(len(record["items"]) / wall, 3),
        "items": len(record["items"]),
        "accuracy": record["aggregates"].get("fda/accuracy", {}).get("mean"),  # None: no item
        "predictions": {it["id"]: it["prediction"] for it in record["items"]},
        "completion_tokens": sum(it["tokens"].get("completion", 0) for it in record["items"]),
    }


def lm_eval_run(args: argparse.Namespace, items: list, folder: Path, concurrent: int) -> dict:
    import datasets
    from lm_eval import simple_evaluate
    from lm_eval.tasks.fda.task import FDA

    data = folder / "fda-items.json"
    data.write_text(
        json.dumps([{"id": it.id, "text": it.prompt, "value": it.reference} for it in items])
    )

    class LocalFDA(FDA):
        """lm-eval's FDA task, its dataset read from our items instead of the hub, and its
        requests asking the llama.cpp server for plain greedy decoding (the server's
        default repeat_penalty is 1.1 even at temperature 0)."""

        def download(self, *unused, **kwargs):  # noqa: ANN002, ANN003
            self.dataset = datasets.load_dataset("json", data_files={"validation": str(data)})

        def construct_requests(self, doc, ctx, **kwargs):  # noqa: ANN001, ANN003
            requests = super().construct_requests(doc, ctx, **kwargs)
            for request in requests:
                request.arguments[1].update(LLAMA_CPP_GREEDY)
            return requests

    start = time.perf_counter()
    server = start_server(
        default_model_path(), n_ctx=4096, n_threads=os.cpu_count() or 1, slots=1, seed=0,
        log=folder / "server.log",
    )  # fmt: skip
    try:
        results = simple_evaluate(
            model="local-completions",
            model_args={
                "base_url": f"{server.url}/completions",
                "model": MODEL_ALIAS,
                "tokenizer_backend": None,
                "tokenized_requests": False,
                "num_concurrent": concurrent,
                "max_retries": 3,
            },
            tasks=[LocalFDA()],
            log_samples=True,
            bootstrap_iters=0,
        )
    finally:
        server.stop()
    wall = time.perf_counter() - start
    (samples,) = results["samples"].values()  # the one task
    (scores,) = results["results"].values()
    return {
        "wall_s": round(wall, 1),
        "items_per_s": round(len(items) / wall, 3),
        "accuracy": scores["contains,none"],
        "predictions": {s["doc"]["id"]: s["resps"][0][0] for s in samples},
    }


def rates(n_threads: int, prompt: str) -> tuple[float, float]:
    """(prefill, decode) tokens/s of the default model with ``n_threads`` threads
    (:func:`model_rates.rates_at`) on ``prompt``'s first 1,900 tokens."""
    from extractbench.suites.gguf_vocab import vocabulary

    tokens = vocabulary(default_model_path()).tokenize(prompt.encode(), add_bos=True)
    return rates_at(n_threads, tokens[:1900])


def lower_bound(items: list, completion_tokens: int, workers: int) -> dict:
    """Unique prompt tokens / prefill rate + generated tokens / decode rate, each rate the
    machine's best of: one process with all cores, or ``workers`` processes at once with
    cores // workers threads each (their rates summed; how ``-n workers`` runs)."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    from extractbench.suites.gguf_vocab import vocabulary

    cores = os.cpu_count() or 1
    prompt = items[0].prompt
    single = rates(cores, prompt)
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(rates, max(1, cores // workers), prompt) for _ in range(workers)]
        split = [f.result() for f in futures]
    parallel = (sum(r[0] for r in split), sum(r[1] for r in split))
    prefill, decode = max(single[0], parallel[0]), max(single[1], parallel[1])
    vocab = vocabulary(default_model_path())
    prefixes = {it.group: it.prefix for it in items}
    unique = sum(len(vocab.tokenize(p.encode(), add_bos=True)) for p in prefixes.values())
    unique += sum(len(vocab.tokenize(it.suffix.encode(), add_bos=False)) for it in items)
    seconds = unique / prefill + completion_tokens / decode
    return {
        "rates_one_process": {
            "prefill_tok_s": round(single[0], 1),
            "decode_tok_s": round(single[1], 1),
        },
        "rates_workers_summed": {
            "prefill_tok_s": round(parallel[0], 1),
            "decode_tok_s": round(parallel[1], 1),
        },
        "prefill_tok_s": round(prefill, 1),
        "decode_tok_s": round(decode, 1),
        "unique_prompt_tokens": unique,
        "generated_tokens": completion_tokens,
        "wall_s": round(seconds, 1),
        "items_per_s": round(len(items) / seconds, 3),
    }


def check_lm_eval() -> None:
    """Exit with one line unless lm-eval, its ``local-completions`` model (the ``api``
    extra) and the datasets library import: checked before minutes of our own runs."""
    try:
        import datasets  # noqa: F401
        import lm_eval.models.openai_completions  # noqa: F401
        import lm_eval.tasks.fda.task  # noqa: F401
    except ImportError as exc:
        sys.exit(f'lm_eval_compare.py: {exc}; run pip install "lm-eval[api]"')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--lm-eval-concurrent", type=lambda t: [int(x) for x in t.split(",")], default=None,
        help="lm-eval num_concurrent values to run, e.g. 1,2 (default: --workers); the "
        "fastest is the one compared",
    )  # fmt: skip
    parser.add_argument(
        "--select", choices=("stratified", "groups"), default="stratified",
        help="stratified: --limit over keys; groups: whole chunks (all their keys)",
    )  # fmt: skip
    parser.add_argument("--out", default=None, help="also write the result JSON here")
    args = parser.parse_args()
    check_lm_eval()
    data_dir = require_data_dir(args.data_dir)
    args.lm_eval_concurrent = args.lm_eval_concurrent or [args.workers]
    items, args.selection = select(load_items(data_dir).items, args.items, args.select)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        runs = {
            "ours_in_process": ours(args, folder / "ours.json"),
            "ours_serve": ours(args, folder / "serve.json", "--serve"),
        }
        for concurrent in args.lm_eval_concurrent:
            runs[f"lm_eval_concurrent_{concurrent}"] = lm_eval_run(args, items, folder, concurrent)
    fastest = min((k for k in runs if k.startswith("lm_eval")), key=lambda k: runs[k]["wall_s"])
    runs["lm_eval"] = runs[fastest]
    runs["lower_bound"] = lower_bound(
        items, runs["ours_in_process"]["completion_tokens"], args.workers
    )
    ours_pred = runs["ours_in_process"]["predictions"]
    lm_pred = runs["lm_eval"]["predictions"]
    shared = sorted(set(ours_pred) & set(lm_pred))
    same = [i for i in shared if ours_pred[i] == lm_pred[i]]
    refs = {it.id: it.reference for it in items}
    result = {
        "items": len(items),
        "select": args.select,
        "workers": args.workers,
        "stripped_prompts_differ": sum(it.prompt != it.prompt.strip() for it in items),
        **{
            name: {k: v for k, v in run.items() if k not in ("predictions",)}
            for name, run in runs.items()
            if name != "lm_eval"
        },
        "lm_eval_compared": fastest,
        "identical_generations_ours_vs_lm_eval": f"{len(same)}/{len(shared)}",
        "accuracy_on_identical_generations": {
            "ours": sum(containment(ours_pred[i], refs[i]) for i in same) / max(1, len(same)),
            "lm_eval": sum(containment(lm_pred[i], refs[i]) for i in same) / max(1, len(same)),
        },
        "differing_generations": [
            {"id": i, "ours": ours_pred[i], "lm_eval": lm_pred[i]}
            for i in shared
            if ours_pred[i] != lm_pred[i]
        ][:5],
        "speedup_ours_vs_lm_eval": round(
            runs["lm_eval"]["wall_s"] / runs["ours_in_process"]["wall_s"], 2
        ),
        "ours_vs_lower_bound": round(
            runs["ours_in_process"]["wall_s"] / runs["lower_bound"]["wall_s"], 2
        ),
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
