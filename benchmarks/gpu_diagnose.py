"""Which difference between an xdist worker and one process makes a llama.cpp GPU load crash.

Where every worker of ``pytest suites/ -n 8 --n-gpu-layers all`` dies of SIGSEGV inside
llama.cpp's model load while one process (``benchmarks/gpu_throughput.py``) loads the same
model with every layer offloaded and runs (docs/backends.md, "The main job on one GPU"),
this script loads the default model (or ``--model``) the way such a worker did, then with
each difference undone one at a time, every variant in processes of its own (started
fresh: nothing initialised), and prints how each process ended: ``ok``, the signal that
killed it (``SIGSEGV``), or its exit status. The differences:

- ``split``: ``main_gpu`` 0 with llama.cpp's split mode none (the worker was given its GPU's
  index; one process passes neither);
- ``ctx``: the worker's context window (the longest prompt of the whole main job, up to the
  model's training context: ``--worker-ctx``, default that training context) against 4,096;
- ``early``: llama.cpp initialised at collection (a vocabulary-only load: the FDA tokenizer,
  the chat template, ``llama_supports_gpu_offload``) before the process narrowed
  ``CUDA_VISIBLE_DEVICES`` to its GPU;
- ``copies``: eight loads at once on one GPU (``--copies``);
- ``plugins``: the pytest plugins the machine has installed, in a real
  ``pytest suites/fda -n 8`` run, against the same run with only xdist and extractbench.

Rows ``worker`` (every difference) and ``single`` (none) frame the rows with one undone;
``worker-now`` is a worker of this commit (started with ``CUDA_VISIBLE_DEVICES`` narrowed,
no device index). Without a GPU (a CPU build, or none visible) it says so and still runs
every load with 0 layers. At most ``--budget`` seconds in all (default 120); a variant cut
there says so. Exit 0 when every load ran, 1 when one crashed or was cut.

    python benchmarks/gpu_diagnose.py                      # on the GPU machine, first
    python benchmarks/gpu_diagnose.py --only single,worker --copies 2 --budget 60
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SHORT_CTX = 4096  # benchmarks/gpu_throughput.py's window
PROMPT = "Applicant: Acme Medical\nDevice: infusion pump\n\nApplicant:"


@dataclass(frozen=True)
class Variant:
    """One way of loading: what the processes do, and what the row says is undone."""

    name: str
    says: str
    split: bool = True  # main_gpu 0, split mode none
    worker_ctx: bool = True  # the worker's window, else SHORT_CTX
    early: bool = True  # llama.cpp initialised before CUDA_VISIBLE_DEVICES is narrowed
    at_spawn: bool = False  # CUDA_VISIBLE_DEVICES narrowed when the process starts
    narrow: bool = True  # CUDA_VISIBLE_DEVICES narrowed to the GPU at all (one process: not)
    copies: int = 0  # processes at once (0: --copies)
    pytest_plugins: str | None = None  # a pytest run: "installed" or "bare"


WORKER = Variant("worker", "every difference, as a worker pinned after it initialised llama.cpp")
VARIANTS = (
    WORKER,
    replace(WORKER, name="no-split", says="undone: main_gpu / split mode none", split=False),
    replace(WORKER, name="ctx-4096", says=f"undone: the worker's window ({SHORT_CTX})", worker_ctx=False),
    replace(WORKER, name="init-after-narrowing", says="undone: llama.cpp initialised before "
            "CUDA_VISIBLE_DEVICES was narrowed", early=False),
    replace(WORKER, name="one-load", says="undone: eight loads at once", copies=1),
    Variant("worker-now", "a worker of this commit: narrowed at start, no device index", split=False, early=False, at_spawn=True),
    Variant("single", "no difference: one process, as gpu_throughput.py", split=False,
            worker_ctx=False, early=False, copies=1, narrow=False),
    Variant("pytest", "pytest suites/fda -n 8 with every installed plugin", pytest_plugins="installed"),
    Variant("pytest-bare", "undone: the other plugins (only xdist and extractbench)",
            pytest_plugins="bare"),
)  # fmt: skip


def ended(code: int | None) -> str:
    """How a process ended: ``ok``, ``SIGSEGV`` (killed by that signal), ``exit N`` or
    ``cut`` (still running at the budget: None)."""
    if code is None:
        return "cut"
    if code == 0:
        return "ok"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"


def child(variant: Variant, layers: str, worker_ctx: int | None, threads: int) -> None:
    """One load in this process, as ``variant`` says; prints one JSON line."""
    from extractbench.fixtures.models.llama_cpp.backend import LlamaCppBackend
    from extractbench.fixtures.models.llama_cpp.gpu import LlamaCppOptions, supports_gpu_offload
    from extractbench.fixtures.models.llama_cpp.vocab import count_prompt_tokens
    from extractbench.suites.model_files import default_model_path

    path = (
        Path(os.environ["GPU_DIAGNOSE_MODEL"])
        if "GPU_DIAGNOSE_MODEL" in os.environ
        else default_model_path()
    )

    def collection_time_init() -> int:  # what a worker did while collecting
        supports_gpu_offload()
        return count_prompt_tokens(path, [PROMPT])[1]

    train_ctx = collection_time_init() if variant.early else 0
    if not variant.at_spawn and os.environ.get("GPU_DIAGNOSE_NARROW"):
        os.environ["CUDA_VISIBLE_DEVICES"] = os.environ["GPU_DIAGNOSE_NARROW"]  # the old pin
    if not variant.early:
        train_ctx = collection_time_init()
    n_ctx = (worker_ctx or train_ctx) if variant.worker_ctx else SHORT_CTX
    settings = LlamaCppOptions(n_gpu_layers=layers, main_gpu=0 if variant.split else None)
    start = time.perf_counter()
    backend = LlamaCppBackend(path, n_ctx=n_ctx, n_threads=threads, settings=settings)
    loaded = time.perf_counter() - start
    answer = backend.generate(PROMPT, max_tokens=8, stop=["\n"])
    print(json.dumps({"n_ctx": n_ctx, "load_s": round(loaded, 2), "answer": answer.text,
                      **backend.describe()}), flush=True)  # fmt: skip


def pytest_command(variant: Variant, layers: str, copies: int, data_dir: str | None) -> tuple[list[str], dict]:  # fmt: skip
    """A real xdist run of ``copies`` workers on a few FDA items (no cache: every worker
    loads), with the installed plugins or only xdist and extractbench's."""
    command = [sys.executable, "-m", "pytest", "suites/fda", "-n", str(copies), "--limit",
               str(copies), "--no-cache", "--n-gpu-layers", layers, "-p", "no:cacheprovider",
               "--no-step-summary", "-q", "--dist", "load"]  # fmt: skip
    command += ["--data-dir", data_dir] if data_dir else []
    env = {}
    if variant.pytest_plugins == "bare":
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        command += ["-p", "xdist.plugin", "-p", "extractbench.plugins.extractbench"]
    return command, env


def run_variant(variant: Variant, args: argparse.Namespace, narrow: str | None, deadline: float) -> dict:  # fmt: skip
    """Start the variant's processes at once, wait for them until ``deadline``; how each
    ended and the last line it printed."""
    copies = variant.copies or args.copies
    base = {**os.environ, "PYTHONPATH": str(ROOT)}
    if args.model:
        base["GPU_DIAGNOSE_MODEL"] = args.model
    if variant.pytest_plugins:
        command, extra = pytest_command(variant, args.layers, copies, args.data_dir)
        commands = [(command, {**base, **extra})]
    else:
        command = [sys.executable, __file__, "--child", variant.name, "--layers", args.layers,
                   "--threads", str(args.threads)]  # fmt: skip
        command += ["--worker-ctx", str(args.worker_ctx)] if args.worker_ctx else []
        env = dict(base)
        if narrow is not None and variant.narrow:
            env["GPU_DIAGNOSE_NARROW"] = narrow
            if variant.at_spawn:
                env["CUDA_VISIBLE_DEVICES"] = narrow
        commands = [(command, env)] * copies
    start = time.monotonic()
    procs = [subprocess.Popen(c, cwd=ROOT, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for c, e in commands]  # fmt: skip
    results = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=max(0.1, deadline - time.monotonic()))
            code = proc.returncode
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            code = None
        lines = (out.strip() or err.strip()).splitlines()
        results.append({"ended": ended(code), "last": lines[-1][:300] if lines else ""})
        if code not in (0, None):
            results[-1]["stderr"] = err.strip().splitlines()[-3:]
    return {"variant": variant.name, "says": variant.says, "processes": len(procs),
            "seconds": round(time.monotonic() - start, 1), "results": results}  # fmt: skip


def summary(row: dict) -> str:
    """``worker: 8 processes, 8 SIGSEGV (every difference, ...), 12.3 s``."""
    counts: dict[str, int] = {}
    for result in row["results"]:
        counts[result["ended"]] = counts.get(result["ended"], 0) + 1
    how = ", ".join(f"{n} {what}" for what, n in sorted(counts.items()))
    return f"gpu_diagnose: {row['variant']}: {row['processes']} process(es), {how} ({row['says']}), {row['seconds']} s"  # fmt: skip


def gpu_here() -> tuple[str | None, str]:
    """The ``CUDA_VISIBLE_DEVICES`` entry of the first GPU llama.cpp lists (None: no GPU
    offload here) and one line saying what this machine is."""
    from extractbench.fixtures.models.gpus import physical_id
    from extractbench.fixtures.models.llama_cpp.devices import llama_devices
    from extractbench.fixtures.models.llama_cpp.gpu import supports_gpu_offload

    devices = llama_devices() if supports_gpu_offload() else []
    if not devices:
        return None, "no GPU visible (a CPU build of llama.cpp, or none found): every load runs with 0 layers on the CPU"  # fmt: skip
    cuda = devices[0].name.startswith("CUDA")
    return (physical_id(devices[0], os.environ) if cuda else None), f"GPU: {devices[0].describe()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=120.0, help="seconds in all (default 120)")
    parser.add_argument("--copies", type=int, default=8, help="loads at once of the worker rows (default 8: -n 8)")  # fmt: skip
    parser.add_argument("--worker-ctx", type=int, default=None, help="the worker's context window (default: the model's training context)")  # fmt: skip
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads per load (16 cores / -n 8)")  # fmt: skip
    parser.add_argument("--layers", default=None, help="--n-gpu-layers of every load (default: all with a GPU, else 0)")  # fmt: skip
    parser.add_argument("--only", default=None, help="comma list of variants: " + ", ".join(v.name for v in VARIANTS))  # fmt: skip
    parser.add_argument("--model", default=None, help="a GGUF file (default: Gemma 3 270M)")
    parser.add_argument("--data-dir", default=None, help="the pytest rows' data (default: as pytest finds it)")  # fmt: skip
    parser.add_argument("--log", default=None, help="append the rows as JSON lines to this file")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    by_name = {v.name: v for v in VARIANTS}
    if args.child:
        child(by_name[args.child], args.layers, args.worker_ctx, args.threads)
        return 0
    chosen = [by_name.get(n) for n in args.only.split(",")] if args.only else list(VARIANTS)
    if None in chosen:
        parser.error(f"--only: choose from {', '.join(by_name)}")
    narrow, machine = gpu_here()
    print(f"gpu_diagnose: {machine}", flush=True)
    args.layers = args.layers or ("all" if narrow is not None else "0")
    deadline, rows = time.monotonic() + args.budget, []
    for index, variant in enumerate(chosen):
        left = deadline - time.monotonic()
        if left <= 1:
            print(f"gpu_diagnose: {variant.name}: not run (budget spent)")
            continue
        share = left / (len(chosen) - index) * (2.5 if variant.pytest_plugins else 1.0)
        row = run_variant(variant, args, narrow, time.monotonic() + min(left, share))
        rows.append(row)
        print(summary(row), flush=True)
        for result in row["results"]:
            if result["ended"] != "ok":
                print(f"    {result['ended']}: {result.get('stderr') or result['last']}")
        if args.log:
            with open(args.log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"machine": machine, "layers": args.layers, **row}) + "\n")
    bad = [r["variant"] for r in rows if any(x["ended"] != "ok" for x in r["results"])]
    print(f"gpu_diagnose: {len(rows) - len(bad)} of {len(rows)} variants loaded and answered"
          + (f"; not: {', '.join(bad)}" if bad else ""))  # fmt: skip
    return 1 if bad or len(rows) < len(chosen) else 0


if __name__ == "__main__":
    sys.exit(main())
