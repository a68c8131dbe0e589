"""Scale-out on FDA with the default model: the items of ``lm_eval_compare.py --select
groups`` (202 items, 18 whole chunks), one run of each way to spread them. Needs the
llama-server of ``extractbench server build``.

1. in process, ``-n WORKERS`` (the reference answers);
2. ``--serve`` with llama-server: ``-n WORKERS --concurrency 1`` (``-np`` = WORKERS slots)
   and ``--concurrency 2`` (2 x WORKERS slots);
3. two llama-server processes on 127.0.0.1 (one thread, WORKERS slots each), ``--backend
   openai`` with both URLs, ``--routing affinity`` against ``round-robin``: wall time,
   prompt tokens the servers reused from their caches (the record's ``endpoints``), and
   how many items after their chunk's first reused at least 90% of their prompt;
4. ``--shard 1/3`` .. ``3/3`` run one after another and ``extractbench merge``d, against
   the one run of 1: aggregates, CIs and every prediction equal to the last digit.

Prints one JSON object (also to ``--out``). Run:

    python benchmarks/scale_out.py [--items 200] [--workers 2] [--out scale_out.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.lm_eval_compare import ours, select  # noqa: E402
from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.fixtures.models.llama_cpp.serve import MODEL_ALIAS, start_server  # noqa: E402
from extractbench.fixtures.models.llama_cpp.server_build import find_llama_server  # noqa: E402
from extractbench.suites.fda.items import load_items  # noqa: E402
from extractbench.suites.model_files import default_model_path  # noqa: E402

REUSED_ENOUGH = 0.9  # the target: share of the prompt reused after a chunk's first item


def prefix_reuse(record: dict, order: dict[str, int]) -> dict:
    """Prompt-cache reuse of a served run: tokens reused over all requests, and the items
    after their group's first (``order``: collection order, the order a group's items run
    in on its worker) that reused at least :data:`REUSED_ENOUGH` of their prompt."""
    seen: set[str] = set()
    later = enough = reused = prompt = 0
    for item in sorted(record["items"], key=lambda i: order[i["id"]]):
        call = item["calls"][0]
        got = call.get("reused_prompt_tokens") or 0
        reused, prompt = reused + got, prompt + call["prompt_tokens"]
        if item["group"] in seen:
            later += 1
            enough += got >= REUSED_ENOUGH * call["prompt_tokens"]
        seen.add(item["group"])
    return {
        "prompt_tokens": prompt,
        "reused_prompt_tokens": reused,
        "reused_share": round(reused / max(1, prompt), 4),
        f"later_items_reusing_{int(REUSED_ENOUGH * 100)}pct": f"{enough}/{later}",
    }


def two_servers(
    args: argparse.Namespace, folder: Path, routing: str, order: dict[str, int]
) -> dict:
    """Run 3 for one routing: two fresh single-thread llama-servers, ``--base-url`` both."""
    servers = [
        start_server(
            default_model_path(),
            n_ctx=8192,
            n_threads=1,
            slots=args.workers,
            seed=0,
            log=folder / f"{routing}-{n}.log",
        )  # fmt: skip
        for n in range(2)
    ]
    try:
        urls = [a for s in servers for a in ("--base-url", s.url)]
        out = folder / f"two-{routing}.json"
        run = ours(args, out, "--backend", "openai", *urls, "--model-name", MODEL_ALIAS,
                   "--routing", routing)  # fmt: skip
    finally:
        for server in servers:
            server.stop()
    record = json.loads(out.read_text())
    return {**run, **prefix_reuse(record, order), "endpoints": record.get("endpoints", {})}


def shards(args: argparse.Namespace, folder: Path, single: Path) -> dict:
    """Run 4: three shards one after another, merged, compared with the single run."""
    paths, walls = [], []
    for k in (1, 2, 3):
        out = folder / f"shard-{k}.json"
        walls.append(ours(args, out, "--shard", f"{k}/3")["wall_s"])
        paths.append(str(out))
    merged = folder / "merged.json"
    done = subprocess.run(
        [sys.executable, "-m", "extractbench.plugins.cli.main", "merge", *paths, "-o", str(merged)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    if not merged.exists():
        return {"merge_exit": done.returncode, "merge_error": done.stderr.strip()}
    one, many = json.loads(single.read_text()), json.loads(merged.read_text())
    preds = {i["id"]: (i["prediction"], i["scores"]) for i in one["items"]}
    differ = [
        i["id"] for i in many["items"] if preds.get(i["id"]) != (i["prediction"], i["scores"])
    ]
    return {
        "shard_wall_s": walls,
        "merge_exit": done.returncode,
        "items": len(many["items"]),
        "aggregates_equal": many["aggregates"] == one["aggregates"],
        "gates_equal": many["gates"] == one["gates"],
        "verdict": [one["verdict"]["word"], many["verdict"]["word"]],
        "predictions_differing": differ,
        "accuracy": [
            one["aggregates"]["fda/accuracy"]["mean"],
            many["aggregates"]["fda/accuracy"]["mean"],
        ],
    }


def agreement(reference: dict, run: dict) -> str:
    ref = reference["predictions"]
    same = sum(run["predictions"].get(k) == v for k, v in ref.items())
    return f"{same}/{len(ref)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--out", default=None, help="also write the result JSON here")
    args = parser.parse_args()
    server = find_llama_server()
    if server is None:
        sys.exit("scale_out.py: no llama-server; run `extractbench server build` first")
    data_dir = require_data_dir(args.data_dir)
    args.data_dir = str(data_dir)
    items, args.selection = select(load_items(data_dir).items, args.items, "groups")
    order = {it.id: n for n, it in enumerate(items)}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        single = folder / "in-process.json"
        runs = {"in_process": ours(args, single)}
        for concurrency in (1, 2):
            out = folder / f"serve-{concurrency}.json"
            run = ours(args, out, "--serve", "--concurrency", str(concurrency))
            reuse = prefix_reuse(json.loads(out.read_text()), order)
            runs[f"serve_np{args.workers * concurrency}_concurrency{concurrency}"] = {
                **run,
                **reuse,
            }
        for routing in ("affinity", "round-robin"):
            runs[f"two_servers_{routing}"] = two_servers(args, folder, routing, order)
        merged = shards(args, folder, single)
    reference = runs["in_process"]
    result = {
        "items": len(items),
        "groups": len({it.group for it in items}),
        "workers": args.workers,
        "llama_server": server.describe(),
        **{
            name: {
                **{k: v for k, v in run.items() if k != "predictions"},
                "same_predictions_as_in_process": agreement(reference, run),
            }
            for name, run in runs.items()
        },
        "three_shards_merged_vs_one_run": merged,
        "benchmark_wall_s": round(time.perf_counter() - started, 1),
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
