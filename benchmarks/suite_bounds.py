"""Every suite's run beside its own speed bound, on the same items, in one invocation.

For each suite (FDA, Table QA, TableBench, Struc-Bench, MINEA), on the default model:

1. the run: ``pytest <suite> -n WORKERS --limit N --no-cache`` in a subprocess, its wall
   time (what a user waits for: collection, model loads, every item) and its run record;
2. the bound on the same calls: each prompt's new tokens charged at their own positions
   and each call's generated tokens at its own length (``prefill_bound.py``), where

   - the calls are the run's own: every model call of every item (judge calls too) is
     replayed from the run record through the suite's ``run`` (as ``--rescore`` does), its
     prompt and generated tokens captured; a prefix shared by several prompts is charged
     once (the token trie: what a perfect prefix cache would prefill);
   - the costs are measured by context length (``model_rates.curve_at``): one prefill of
     the run's longest prompt timed at 512, 1,024, 2,048, ... tokens and at its end
     (cumulative), decode rates at each of those lengths, interpolated between them; the
     machine's best, length by length, of one process with every core and WORKERS
     processes at once with cores // WORKERS threads each (their throughput summed);
   - the bound is given without and with start-up: ``pytest SELECTION --collect-only``'s
     wall time plus one model load (every worker pays both, at once).

The machine's speed may drift between a run and the measurement of its curve: a fixed probe
(one 1,024-token prefill in the run's configuration) is timed before the run, after it and
after the curve, and the bound is also given at the run's speed (times
``prefill_bound.speed_ratio``). Prints a markdown table (suite, items, wall, bound, start-up,
ratios, tokens, the probes) and the load average before and after each run. Run, niced on a shared
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

from model_rates import curve_at  # noqa: E402  (benchmarks/model_rates.py)
from prefill_bound import Curve, best_curve, bound_seconds, curve_lengths, speed_ratio  # noqa: E402

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.fixtures.models import ModelSpec, load_backend  # noqa: E402
from extractbench.fixtures.models.wrappers import ReplayBackend  # noqa: E402
from extractbench.plugins.record import RunRecord, load_record  # noqa: E402
from extractbench.suites.model import ModelError, ModelInfo  # noqa: E402
from extractbench.suites.model_files import default_model_path  # noqa: E402
from extractbench.suites.protocol import Models  # noqa: E402
from extractbench.suites.registry import Registry  # noqa: E402

# suite -> (the pytest selection that runs it alone, the default --limit)
SUITES: dict[str, tuple[str, int]] = {
    "fda": ("suites/fda", 20),
    "tableqa": ("suites/tableqa", 6),
    "tablebench": ("suites/tablebench", 6),
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
    prompt it is asked with the tokens the run generated for it, with the real backend's capabilities and tokenizer (so the suite
    builds the very prompts of the run: MINEA sizes its threads by token counts)."""

    def __init__(self, replay: ReplayBackend, real: Any, calls: list[tuple[str, int]]) -> None:
        self.info, self._replay, self._real, self.calls = replay.info, replay, real, calls
        self.capabilities = real.capabilities
        self.misses = 0

    def count_tokens(self, text: str) -> int:
        return self._real.count_tokens(text)

    def generate(self, prompt: str, **kwargs: Any) -> Any:
        try:
            generation = self._replay.generate(prompt, **kwargs)
        except ModelError:
            self.misses += 1
            self.calls.append((prompt, 0))
            raise
        self.calls.append((prompt, generation.completion_tokens))
        return generation


def _replay(section: dict[str, Any], calls: list[dict[str, Any]]) -> ReplayBackend:
    info = ModelInfo(
        section.get("name", ""),
        section.get("backend", ""),
        section.get("path", ""),
        section.get("sha256", ""),
    )
    return ReplayBackend(info, section.get("fingerprint", ""), calls)


def captured_calls(
    record: RunRecord, name: str, data_dir: Path
) -> tuple[list[tuple[str, int]], int]:
    """Every call the run made for suite ``name`` as (prompt, generated tokens): the
    record's items replayed through the suite's ``run``; and how many calls the replay could
    not answer (0 when the prompts are exactly the run's)."""
    suite = Registry.installed().suites[name]
    options = suite.parse_options(record.settings.get("suite_options", {}).get(name))
    wanted = {it.id for it in record.items if it.suite == name}
    items = [it for it in suite.load(data_dir, options).items if it.id in wanted]
    calls = [c for it in record.items for c in it.calls]
    spec = ModelSpec(
        "llama-cpp", default_model_path(), 0, max(1, os.cpu_count() or 1), default=True
    )
    real = load_backend(spec, items)
    captured: list[tuple[str, int]] = []
    model = Capture(_replay(record.model, calls), real, captured)
    judge = Capture(_replay(record.judge or record.model, calls), real, captured)
    for item in items:
        try:
            suite.run(item, Models(model, judge), options)
        except ModelError:
            pass  # counted as a miss
    return captured, model.misses + judge.misses


def machine_curve(tokens: list[int], lengths: list[int], workers: int) -> tuple[Curve, float]:
    """The machine's best costs by length (:func:`prefill_bound.best_curve` of one process
    with every core and ``workers`` processes at once with ``cores // workers`` threads each,
    their throughput summed) and the model's load time in the latter (what each worker
    pays at start-up)."""
    cores = os.cpu_count() or 1
    context = get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=context) as pool:
        single = pool.submit(curve_at, cores, tokens, lengths).result()
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        futures = [
            pool.submit(curve_at, max(1, cores // workers), tokens, lengths) for _ in range(workers)
        ]
        split = [f.result() for f in futures]
    together = Curve(
        tuple(lengths),
        tuple(max(c["prefill_s"][i] for c in split) / workers for i in range(len(lengths))),
        tuple(sum(c["decode_tok_s"][i] for c in split) for i in range(len(lengths))),
    )
    alone = Curve(tuple(lengths), tuple(single["prefill_s"]), tuple(single["decode_tok_s"]))
    return best_curve([alone, together]), max(c["load_s"] for c in split)


# the speed probe's tokens: any valid ids time alike (dense compute); fixed, so every probe
# of every invocation prefills the same batch
PROBE_TOKENS = [1000 + (i * 7919) % 200_000 for i in range(1024)]


def speed_probe(workers: int) -> float:
    """Seconds of one 1,024-token prefill in the run's configuration (``workers`` processes
    at once, ``cores // workers`` threads each; the slowest): taken before a run, after it
    and after its curve, so the bound can be moved to the speed the machine had during the
    run (:func:`prefill_bound.speed_ratio`)."""
    cores = os.cpu_count() or 1
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        futures = [
            pool.submit(curve_at, max(1, cores // workers), PROBE_TOKENS, [1024], 1)
            for _ in range(workers)
        ]
        return max(f.result()["prefill_s"][0] for f in futures)


def collection_seconds(selection: str, limit: int, data_dir: Path) -> float:
    """Wall seconds of ``pytest SELECTION --collect-only --limit LIMIT``: the collection
    every run (each xdist worker, at once) pays before its first item."""
    command = [
        sys.executable, "-m", "pytest", selection, "--collect-only", "-q", "-p",
        "no:cacheprovider", "--limit", str(limit), f"--data-dir={data_dir}",
    ]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, check=False, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"suite_bounds.py: {' '.join(command)} failed:\n{done.stdout[-2000:]}")
    return seconds


def bound(
    record: RunRecord, name: str, data_dir: Path, workers: int, selection: str, limit: int
) -> dict[str, Any]:
    """The suite's bound on the run's own items and calls (see the module docstring), with
    and without start-up (collection and one model load)."""
    from llama_cpp import Llama

    calls, misses = captured_calls(record, name, data_dir)
    vocab = Llama(str(default_model_path()), vocab_only=True, verbose=False)
    sequences = [vocab.tokenize(prompt.encode(), add_bos=True) for prompt, _ in calls]
    generated = [n for _, n in calls]
    longest = max(sequences, key=len)
    lengths = curve_lengths(len(longest))
    curve, load_s = machine_curve(longest, lengths, workers)
    costs = bound_seconds(sequences, generated, curve)
    startup = collection_seconds(selection, limit, data_dir) + load_s
    return {
        "calls": len(calls),
        "replay_misses": misses,
        "prompt_tokens": int(costs["prompt_tokens"]),
        "unique_prompt_tokens": int(costs["unique_tokens"]),
        "median_prompt_tokens": int(statistics.median(map(len, sequences))),
        "longest_prompt_tokens": len(longest),
        "generated_tokens": sum(generated),
        "curve": {
            "lengths": lengths,
            "prefill_s": list(curve.prefill_s),
            "decode_tok_s": list(curve.decode_tok_s),
        },  # fmt: skip
        "prefill_s": round(costs["prefill_s"], 1),
        "decode_s": round(costs["decode_s"], 1),
        "bound_s": round(costs["bound_s"], 1),
        "startup_s": round(startup, 1),
        "bound_startup_s": round(costs["bound_s"] + startup, 1),
    }


def table(rows: dict[str, dict[str, Any]]) -> str:
    """The markdown table of the performance page."""
    lines = [
        "| suite | items | run wall | bound (prefill + decode) | + start-up | wall / bound "
        "| wall / bound with start-up | unique / all prompt tokens | median, longest prompt "
        "| generated tokens | load before → after | probe before, after run, after curve "
        "| wall / bound at the run's speed |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|",
    ]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['items']} | {r['wall_s']:.1f} s | {r['bound_s']:.1f} s "
            f"({r['prefill_s']:.1f} + {r['decode_s']:.1f}) | {r['startup_s']:.1f} s | "
            f"{r['wall_s'] / r['bound_s']:.2f}x | {r['wall_s'] / r['bound_startup_s']:.2f}x | "
            f"{r['unique_prompt_tokens']:,} / {r['prompt_tokens']:,} | "
            f"{r['median_prompt_tokens']:,}, {r['longest_prompt_tokens']:,} | "
            f"{r['generated_tokens']:,} | {r['load_before'][0]} → {r['load_after'][0]} | "
            f"{', '.join(f'{p:.2f} s' for p in r['probe_s'])} | "
            f"{r['wall_s'] / r['bound_at_run_speed_s']:.2f}x |"
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
            before = speed_probe(args.workers)
            run = run_suite(SUITES[name][0], limits[name], args.workers, data_dir, out)
            after_run = speed_probe(args.workers)
            record = load_record(out)
            scored = [it for it in record.items if it.suite == name]
            costs = bound(record, name, data_dir, args.workers, SUITES[name][0], limits[name])
            after_curve = speed_probe(args.workers)
            ratio = speed_ratio(before, after_run, after_curve)
            rows[name] = {
                "items": len(scored),
                "limit": limits[name],
                **run,
                "record_duration_s": record.duration_s,
                **costs,
                "probe_s": [round(before, 2), round(after_run, 2), round(after_curve, 2)],
                "speed_ratio": round(ratio, 3),
                "bound_at_run_speed_s": round(costs["bound_s"] * ratio, 1),
            }
            print(json.dumps({name: rows[name]}), flush=True)
    result = {"workers": args.workers, "cpu_count": os.cpu_count(), "suites": rows}
    print(table(rows))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
