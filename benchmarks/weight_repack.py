"""llama.cpp's weight repacking on and off: load time, prefill and decode rates, crashes.

Loads the default model (Gemma 3 270M Q4_K_M) once with llama.cpp's extra buffer types
(``use_extra_bufts = True``, its default: weights repacked for AMX / AVX2 / AVX-512
kernels) and once without (``fixtures.models.llama_cpp.repack.no_extra_buffers``), each in its own
subprocess of ``--python`` (default: this interpreter), so that a mode which crashes (on
an AMX CPU with an AMX build, repacking segfaults: ggml-org/llama.cpp#20824) is reported
as ``crashed: SIGSEGV`` and the other still runs. Each subprocess measures, with
``n_threads`` = ``--threads``, ``n_ctx`` 4096, ``n_batch`` 512:

* load: seconds for ``llama_cpp.Llama(...)``;
* prefill: tokens/s of one ``create_completion(max_tokens=1)`` on deterministic prompts
  of about 900 and 3000 tokens (counted with ``llm.tokenize``), ``llm.reset()`` before
  each run, the median of ``--repeat`` runs;
* decode: tokens/s generating 64 tokens greedily (``temperature=0``) from a short
  prompt, without the prefill: wall time minus that of a ``max_tokens=1`` run of the same
  prompt (median of ``--repeat``), and llama.cpp's own eval timings as a cross-check.

Prints the llama-cpp-python version, ``llama_print_system_info()`` and whether the CPU
and the build have AMX, a table per mode, and whether both modes generated the same
greedy text. Run:

    python benchmarks/weight_repack.py [--threads 2] [--python OTHER_VENV/bin/python]
                                       [--json weight_repack.json]

``--python`` measures another llama-cpp-python build (for example one compiled without
AMX); it needs only llama-cpp-python: the repository is put on its ``PYTHONPATH`` and
``fixtures/models/llama_cpp/repack.py`` is loaded from its file.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ("on", "off")  # use_extra_bufts True (llama.cpp's default) / False
N_CTX = 4096
N_BATCH = 512
PROMPT_TOKENS = (900, 3000)
DECODE_TOKENS = 64
DECODE_PROMPT = "The history of the lighthouse on the northern cape began in 1852, when"
WORDS = (
    "river harbour council ledger shipment engine valve timber granite lantern station "
    "quarterly invoice surveyor orchard railway cargo pressure voltage archive bridge "
    "tenant contract sample reading delay signal weather northern western annual"
).split()


# --- the worker: runs in the measured interpreter, needs only llama-cpp-python ---------


def load_repack_module():
    """``fixtures/models/llama_cpp/repack.py`` loaded from its file (its package imports the whole
    backend stack, which the measured interpreter need not have)."""
    spec = importlib.util.spec_from_file_location(
        "_weight_repack_fixture", ROOT / "fixtures" / "models" / "repack.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def deterministic_text(sentences: int = 800) -> str:
    """Seeded pseudo-English: the same text on every run and machine."""
    rng = random.Random(20240611)
    lines = []
    for n in range(sentences):
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 16))]
        lines.append(f"Entry {n}: the {' '.join(words)} at {rng.randint(10, 9999)} units.")
    return "\n".join(lines)


def prompt_of(llm, source_tokens: list[int], target: int) -> tuple[str, int]:
    """A prompt of about ``target`` tokens (BOS included) and its exact token count."""
    text = llm.detokenize(source_tokens[: target - 1]).decode("utf-8", "replace")
    return text, len(llm.tokenize(text.encode("utf-8")))


def timed_completion(llm, prompt: str, max_tokens: int) -> tuple[float, dict]:
    llm.reset()
    start = time.perf_counter()
    out = llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0)
    return time.perf_counter() - start, out


def worker(args: argparse.Namespace) -> None:
    """Measure one mode; the partial result is written to ``--worker-out`` after every
    stage, so a crash leaves what was measured before it."""
    import llama_cpp

    result: dict = {"mode": args.worker, "stage": "load", "loadavg": [os.getloadavg()]}

    def save(stage: str) -> None:
        result["stage"] = stage
        Path(args.worker_out).write_text(json.dumps(result))

    save("load")
    repack = load_repack_module()
    params = dict(
        model_path=args.model, n_ctx=N_CTX, n_batch=N_BATCH, n_threads=args.threads,
        n_threads_batch=args.threads, verbose=False,
    )  # fmt: skip
    start = time.perf_counter()
    if args.worker == "off":
        with repack.no_extra_buffers():
            llm = llama_cpp.Llama(**params)
    else:
        llm = llama_cpp.Llama(**params)
    result["load_s"] = time.perf_counter() - start

    source = llm.tokenize(deterministic_text().encode("utf-8"), add_bos=False)
    result["prefill"] = {}
    for target in args.prompt_tokens:
        prompt, count = prompt_of(llm, source, target)
        save(f"prefill {target}")
        runs = [timed_completion(llm, prompt, 1)[0] for _ in range(args.repeat)]
        result["prefill"][str(target)] = {
            "prompt_tokens": count,
            "runs_s": runs,
            "tokens_per_s": count / statistics.median(runs),
        }

    save("decode")
    prefill_runs, full_runs, perf_rates, texts, generated = [], [], [], [], []
    for _ in range(args.repeat):
        prefill_runs.append(timed_completion(llm, DECODE_PROMPT, 1)[0])
        llm.reset()
        llama_cpp.llama_perf_context_reset(llm._ctx.ctx)
        start = time.perf_counter()
        out = llm.create_completion(DECODE_PROMPT, max_tokens=args.decode_tokens, temperature=0.0)
        full_runs.append(time.perf_counter() - start)
        perf = llama_cpp.llama_perf_context(llm._ctx.ctx)
        if perf.n_eval > 0 and perf.t_eval_ms > 0:
            perf_rates.append(perf.n_eval / (perf.t_eval_ms / 1000))
        texts.append(out["choices"][0]["text"])
        generated.append(out["usage"]["completion_tokens"])
    # the first token comes out of the prefill; the rest are one decode step each
    decode_s = statistics.median(full_runs) - statistics.median(prefill_runs)
    result["decode"] = {
        "completion_tokens": generated[0],
        "prefill_runs_s": prefill_runs,
        "full_runs_s": full_runs,
        "tokens_per_s": (generated[0] - 1) / decode_s if decode_s > 0 else None,
        "llama_timings_tokens_per_s": statistics.median(perf_rates) if perf_rates else None,
        "text": texts[0],
        "text_stable_across_repeats": len(set(texts)) == 1,
    }
    result["loadavg"].append(os.getloadavg())
    save("done")


def info() -> None:
    """The measured interpreter's llama-cpp-python: version and system info, as JSON."""
    import llama_cpp

    system_info = llama_cpp.llama_print_system_info().decode("utf-8", "replace")
    print(json.dumps({"version": llama_cpp.__version__, "system_info": system_info.strip()}))


# --- the controller: one subprocess per mode ----------------------------------------------


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run_mode(args: argparse.Namespace, mode: str, model: Path) -> dict:
    """One mode in its own process; a crash becomes ``{"status": "crashed: SIGSEGV"}``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        cmd = [
            args.python, str(Path(__file__).resolve()), "--worker", mode,
            "--worker-out", str(out), "--model", str(model), "--threads", str(args.threads),
            "--repeat", str(args.repeat), "--decode-tokens", str(args.decode_tokens),
            "--prompt-tokens", *map(str, args.prompt_tokens),
        ]  # fmt: skip
        try:
            proc = subprocess.run(
                cmd, env=child_env(), capture_output=True, text=True, timeout=args.timeout
            )
            code, stderr = proc.returncode, proc.stderr
        except subprocess.TimeoutExpired as exc:
            code, stderr = None, exc.stderr or ""
            stderr = stderr.decode("utf-8", "replace") if isinstance(stderr, bytes) else stderr
        result = json.loads(out.read_text()) if out.is_file() else {"mode": mode}
    if code is None:
        result["status"] = f"timed out after {args.timeout:g} s"
    elif code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        result["status"] = f"crashed: {name}"
    elif code != 0 or result.get("stage") != "done":
        result["status"] = f"failed: exit code {code}"
    else:
        result["status"] = "ok"
    if result["status"] != "ok":
        result["crashed_during"] = result.get("stage")
        result["stderr_tail"] = stderr.strip().splitlines()[-15:]
    return result


def fmt(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def table(args: argparse.Namespace, results: dict[str, dict]) -> str:
    head = ["repack", "status", "load s"]
    head += [f"prefill {n} tok/s" for n in args.prompt_tokens]
    head += [f"decode {args.decode_tokens} tok/s", "(llama.cpp timings)"]
    rows = [head]
    for mode, res in results.items():
        prefill = res.get("prefill", {})
        decode = res.get("decode", {})
        status = res["status"]
        if status != "ok":
            status += f" ({res.get('crashed_during')})"
        row = [mode, status, fmt(res.get("load_s"), 2)]
        row += [fmt(prefill.get(str(n), {}).get("tokens_per_s"), 1) for n in args.prompt_tokens]
        row += [
            fmt(decode.get("tokens_per_s"), 1),
            fmt(decode.get("llama_timings_tokens_per_s"), 1),
        ]
        rows.append(row)
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in rows)
    return "\n".join(line.rstrip() for line in lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="llama.cpp threads (default: all cores)")  # fmt: skip
    parser.add_argument("--python", default=sys.executable, help="interpreter whose llama-cpp-python is measured")  # fmt: skip
    parser.add_argument("--model", default=None, help="GGUF (default: the default model)")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--prompt-tokens", type=int, nargs="+", default=list(PROMPT_TOKENS))
    parser.add_argument("--decode-tokens", type=int, default=DECODE_TOKENS)
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per mode")
    parser.add_argument("--json", default=None, help="also write the result JSON here")
    parser.add_argument("--worker", choices=MODES, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--info", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.info:
        return info()
    if args.worker:
        return worker(args)

    sys.path.insert(0, str(ROOT))
    from extractbench.fixtures.models.llama_cpp.repack import build_features, cpu_flags, decide
    from extractbench.suites.model_files import default_model_path

    model = Path(args.model) if args.model else default_model_path()
    probe = subprocess.run(
        [args.python, str(Path(__file__).resolve()), "--info"],
        env=child_env(), capture_output=True, text=True, check=True,
    )  # fmt: skip
    build = json.loads(probe.stdout.strip().splitlines()[-1])
    features = build_features(build["system_info"])
    flags = cpu_flags()
    auto = decide("auto", flags, features)
    print(f"python: {args.python}")
    print(f"llama-cpp-python {build['version']}")
    print(f"system info: {build['system_info']}")
    print(f"CPU AMX: {'yes' if auto.cpu_amx else 'no'} ({', '.join(sorted(f for f in flags if f.startswith('amx'))) or 'no amx flags'})")  # fmt: skip
    print(f"build AMX_INT8: {features.get('AMX_INT8', '0')}, REPACK: {features.get('REPACK', '0')}")
    print(f"--weight-repack auto would be: {auto.reason}")
    print(f"model: {model}; threads {args.threads}, n_ctx {N_CTX}, n_batch {N_BATCH}\n")

    results: dict[str, dict] = {}
    for mode in args.modes:
        results[mode] = run_mode(args, mode, model)
    print(table(args, results))
    texts = {m: r["decode"]["text"] for m, r in results.items() if r["status"] == "ok"}
    same: bool | None = None
    if len(texts) == len(MODES):
        same = len(set(texts.values())) == 1
    print(f"\nsame greedy {args.decode_tokens}-token text: " + {True: "yes", False: "no", None: "n/a (a mode did not run)"}[same])  # fmt: skip
    for mode, res in results.items():
        load = ", ".join(" ".join(f"{x:.2f}" for x in avg) for avg in res.get("loadavg", []))
        print(f"load average ({mode}, start/end): {load or '-'}")
        if res["status"] != "ok" and res.get("stderr_tail"):
            print(f"stderr of repack {mode} (last lines):\n  " + "\n  ".join(res["stderr_tail"]))
    record = {
        "python": args.python,
        "llama_cpp_python": build["version"],
        "system_info": build["system_info"],
        "cpu_amx": auto.cpu_amx,
        "build_amx": auto.build_amx,
        "auto_decision": auto.reason,
        "model": str(model),
        "threads": args.threads,
        "n_ctx": N_CTX,
        "n_batch": N_BATCH,
        "repeat": args.repeat,
        "modes": results,
        "same_greedy_text": same,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
