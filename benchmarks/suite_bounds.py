"""Every suite's run beside its own speed bound, on the same items, in one invocation.

For each suite (FDA, Table QA, TableBench, Struc-Bench, MINEA), on the default model:

1. the run: ``pytest <suite> -n WORKERS --limit N --no-cache`` in a subprocess, its wall
   time (what a user waits for: collection, model loads, every item) and its run record;
2. the bound, as ``benchmarks/lm_eval_compare.py`` defines it for FDA: unique prompt
   tokens / measured prefill rate + generated tokens / measured decode rate, where

   - the prompts are the run's own: every model call of every item (judge calls too) is
     replayed from the run record through the suite's ``run`` (as ``--rescore`` does) and
     its prompt captured; "unique prompt tokens" is the size of the token trie of all of
     them (a prefix shared by several prompts counts once: what a perfect prefix cache
     would prefill);
   - the generated tokens are the record's (every call's ``completion_tokens``);
   - the rates are the machine's best, as in ``lm_eval_compare.lower_bound``: one process
     with every core, or WORKERS processes at once with cores // WORKERS threads each (their
     rates summed), each prefilling one prompt of the suite's median prompt length and then
     decoding 64 tokens after it (a rate measured on a short prompt would overstate a
     long-prompt suite's speed: attention grows with the context).

Prints a markdown table (suite, items, wall, bound, ratio, tokens, rates) and the load
average before and after each run (whether the machine was shared). Run, niced on a shared
machine:

    nice -n 10 python benchmarks/suite_bounds.py --workers 2 \\
        --limit fda=20 --limit tableqa=6 --limit tablebench=6 --limit strucbench=3 --limit minea=1
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.fixtures.models import ModelSpec, load_backend  # noqa: E402
from extractbench.fixtures.models.wrappers import ReplayBackend  # noqa: E402
from extractbench.plugins.outputs.record import RunRecord  # noqa: E402
from extractbench.plugins.outputs.record_io import load_record  # noqa: E402
from extractbench.suites.model import ModelError, ModelInfo  # noqa: E402
from extractbench.suites.model_files import default_model_path  # noqa: E402
from extractbench.suites.protocol import Models  # noqa: E402
from extractbench.suites.registry import Registry  # noqa: E402
from model_rates import rates_at  # noqa: E402  (benchmarks/model_rates.py)

# suite -> (the pytest selection that runs it alone, the default --limit)
SUITES: dict[str, tuple[str, int]] = {
    "fda": ("suites/fda", 20),
    "tableqa": ("suites/tableqa/test_tableqa.py::test_tableqa", 6),
    "tablebench": ("suites/tablebench/test_tablebench.py::test_tablebench", 6),
    "strucbench": ("suites/strucbench", 3),
    "minea": ("suites/minea", 1),
}


def load() -> list[float]:
    """The 1, 5 and 15 minute load averages (how shared the machine is)."""
    return [round(x, 2) for x in os.getloadavg()]


def run_suite(selection: str, limit: int, workers: int, data_dir: Path, out: Path) -> dict:
    """``pytest SELECTION -n WORKERS --limit LIMIT --no-cache``: wall time and record."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        selection,
        "-n",
        str(workers),
        "--limit",
        str(limit),
        "--no-cache",
        "-q",
        "-p",
        "no:cacheprovider",
        "--data-dir",
        str(data_dir),
        "--report-json",
        str(out),
    ]
    before = load()
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, check=False, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if not out.exists():
        sys.exit(f"suite_bounds.py: {' '.join(command)} wrote no record:\n{done.stdout[-2000:]}")
    return {
        "wall_s": round(wall, 1),
        "exit": done.returncode,
        "load_before": before,
        "load_after": load(),
    }


class Capture:
    """A model that answers from the run record (``ReplayBackend``) and keeps every
    prompt it is asked, with the real backend's capabilities and tokenizer (so the suite
    builds the very prompts of the run: MINEA sizes its threads by token counts)."""

    def __init__(self, replay: ReplayBackend, real: Any, prompts: list[str]) -> None:
        self.info, self._replay, self._real, self.prompts = replay.info, replay, real, prompts
        self.capabilities = real.capabilities
        self.misses = 0

    def count_tokens(self, text: str) -> int:
        return self._real.count_tokens(text)

    def generate(self, prompt: str, **kwargs: Any) -> Any:
        self.prompts.append(prompt)
        try:
            return self._replay.generate(prompt, **kwargs)
        except ModelError:
            self.misses += 1
            raise


def _replay(section: dict[str, Any], calls: list[dict[str, Any]]) -> ReplayBackend:
    info = ModelInfo(
        section.get("name", ""),
        section.get("backend", ""),
        section.get("path", ""),
        section.get("sha256", ""),
    )
    return ReplayBackend(info, section.get("fingerprint", ""), calls)


def captured_prompts(record: RunRecord, name: str, data_dir: Path) -> tuple[list[str], int]:
    """Every prompt the run sent for suite ``name`` (the record's items, replayed through
    the suite's ``run``) and how many calls the replay could not answer (0 when the
    prompts are exactly the run's)."""
    suite = Registry.installed().suites[name]
    options = suite.parse_options(record.settings.get("suite_options", {}).get(name))
    wanted = {it.id for it in record.items if it.suite == name}
    items = [it for it in suite.load(data_dir, options).items if it.id in wanted]
    calls = [c for it in record.items for c in it.calls]
    spec = ModelSpec(
        "llama-cpp", default_model_path(), 0, max(1, os.cpu_count() or 1), default=True
    )
    real = load_backend(spec, items)
    prompts: list[str] = []
    model = Capture(_replay(record.model, calls), real, prompts)
    judge = Capture(_replay(record.judge or record.model, calls), real, prompts)
    for item in items:
        try:
            suite.run(item, Models(model, judge), options)
        except ModelError:
            pass  # counted as a miss
    return prompts, model.misses + judge.misses


def unique_prompt_tokens(prompts: list[str]) -> tuple[int, int, int]:
    """(unique, total, median) prompt tokens of ``prompts`` in the default model's
    tokenizer (with BOS). Unique = nodes of the token trie = sum over the sorted token
    sequences of len(s_i) - lcp(s_i, s_{i-1}): every distinct prefix counted once."""
    from llama_cpp import Llama

    vocab = Llama(str(default_model_path()), vocab_only=True, verbose=False)
    seqs = sorted(vocab.tokenize(p.encode(), add_bos=True) for p in prompts)
    unique, previous = 0, []
    for seq in seqs:
        common = 0
        for a, b in zip(seq, previous, strict=False):
            if a != b:
                break
            common += 1
        unique += len(seq) - common
        previous = seq
    lengths = [len(s) for s in seqs]
    return unique, sum(lengths), int(statistics.median(lengths)) if lengths else 0


def machine_rates(tokens: list[int], workers: int) -> dict[str, float]:
    """The best of one process with every core and ``workers`` processes at once (rates
    summed), the combination ``lm_eval_compare.lower_bound`` uses."""
    cores = os.cpu_count() or 1
    context = get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        single = pool.submit(rates_at, cores, tokens).result()
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        split = [
            f.result()
            for f in [
                pool.submit(rates_at, max(1, cores // workers), tokens) for _ in range(workers)
            ]
        ]
    parallel = (sum(r[0] for r in split), sum(r[1] for r in split))
    return {
        "prefill_tok_s": round(max(single[0], parallel[0]), 1),
        "decode_tok_s": round(max(single[1], parallel[1]), 1),
    }


def bound(record: RunRecord, name: str, data_dir: Path, workers: int) -> dict[str, Any]:
    """The suite's bound on the run's own items and calls (see the module docstring)."""
    from llama_cpp import Llama

    prompts, misses = captured_prompts(record, name, data_dir)
    unique, total, median = unique_prompt_tokens(prompts)
    generated = sum(int(c.get("completion_tokens", 0)) for it in record.items for c in it.calls)
    vocab = Llama(str(default_model_path()), vocab_only=True, verbose=False)
    sample = min(prompts, key=lambda p: abs(len(p) - statistics.median(map(len, prompts))))
    rates = machine_rates(vocab.tokenize(sample.encode(), add_bos=True), workers)
    seconds = unique / rates["prefill_tok_s"] + generated / rates["decode_tok_s"]
    return {
        "calls": len(prompts),
        "replay_misses": misses,
        "prompt_tokens": total,
        "unique_prompt_tokens": unique,
        "median_prompt_tokens": median,
        "generated_tokens": generated,
        **rates,
        "bound_s": round(seconds, 1),
    }


def table(rows: dict[str, dict[str, Any]]) -> str:
    """The markdown table of the performance page."""
    lines = [
        "| suite | items | run wall | bound | wall / bound | unique / all prompt tokens "
        "| generated tokens | prefill, decode tok/s (at median prompt) | load before → after |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['items']} | {r['wall_s']:.1f} s | {r['bound_s']:.1f} s | "
            f"{r['wall_s'] / r['bound_s']:.2f}x | {r['unique_prompt_tokens']:,} / "
            f"{r['prompt_tokens']:,} | {r['generated_tokens']:,} | {r['prefill_tok_s']:.0f}, "
            f"{r['decode_tok_s']:.1f} ({r['median_prompt_tokens']:,} tokens) | "
            f"{r['load_before'][0]} → {r['load_after'][0]} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="SUITE=N",
        help="items of a suite (default: "
        + ", ".join(f"{k}={v[1]}" for k, v in SUITES.items())
        + ")",
    )
    parser.add_argument("--suite", action="append", default=[], choices=sorted(SUITES))
    parser.add_argument("--out", default=None, help="also write the result JSON here")
    args = parser.parse_args()
    limits = {name: n for name, (_, n) in SUITES.items()}
    for text in args.limit:
        name, _, n = text.partition("=")
        if name not in SUITES or not n.isdigit():
            sys.exit(
                f"suite_bounds.py: --limit {text}: expected SUITE=N, SUITE one of {list(SUITES)}"
            )
        limits[name] = int(n)
    data_dir = require_data_dir(args.data_dir)
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.suite or list(SUITES):
            out = Path(tmp) / f"{name}.json"
            run = run_suite(SUITES[name][0], limits[name], args.workers, data_dir, out)
            record = load_record(out)
            scored = [it for it in record.items if it.suite == name]
            rows[name] = {
                "items": len(scored),
                "limit": limits[name],
                **run,
                "record_duration_s": record.duration_s,
                **bound(record, name, data_dir, args.workers),
            }
            print(json.dumps({name: rows[name]}), flush=True)
    result = {"workers": args.workers, "cpu_count": os.cpu_count(), "suites": rows}
    print(table(rows))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
