"""llama.cpp flash attention on the CPU: prefill rates and answers, on and off.

Loads the default GGUF (or ``--model``) twice in this process, no layer offloaded, flash
attention off (the default on the CPU) and on, then:

1. Prefill: the Table-QA prompts nearest ``--prefill-tokens`` (default 5,300 and 13,800
   tokens) through each model with a budget of one token, each prompt from an empty KV
   cache, alternating the two models, ``--repeats`` times; prompt tokens / best seconds.
2. Answers: ``--limit`` items of every suite (the suite's own ``--limit`` selection,
   stratified over its first breakdown) through each model with the suite's own ``run``
   (the model is its own judge, as without ``--judge-model``); per item, whether every
   model call's text and every score are identical.

Run (niced, about an hour on 2 cores):

    nice python benchmarks/flash_attention.py --limit 6 --suite-limit fda=12,strucbench=3,minea=2

Prints JSON: prefill rates and speed-ups, per-suite agreement, the items that differ.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.fixtures.models.llama_cpp.backend import LlamaCppBackend  # noqa: E402
from extractbench.fixtures.models.llama_cpp.gpu import LlamaCppOptions  # noqa: E402
from extractbench.fixtures.models.llama_cpp.vocab import count_prompt_tokens  # noqa: E402
from extractbench.fixtures.models.routing import routing  # noqa: E402
from extractbench.plugins.run.selection import stratified_limit  # noqa: E402
from extractbench.suites.model_files import default_model_path  # noqa: E402
from extractbench.suites.protocol import Models  # noqa: E402
from extractbench.suites.registry import entry_point_suites  # noqa: E402

MODES = ("off", "on")
SUITE_OPTIONS = {"minea": {"iterations": 1}}  # one further call per piece: minutes, not hours


class Recording:
    """A backend whose every call's text is kept (MINEA and the judges call several times)."""

    def __init__(self, inner: LlamaCppBackend) -> None:
        self.inner, self.texts = inner, []
        self.info, self.capabilities = inner.info, inner.capabilities

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def generate(self, prompt: str, **kwargs: Any):  # noqa: ANN201 - a Generation
        out = self.inner.generate(prompt, **kwargs)
        self.texts.append(out.text)
        return out


def prefill(models: dict[str, LlamaCppBackend], prompts: list[str], repeats: int) -> list[dict]:
    """Prompt tokens per second of a one-token generation from an empty cache, best of
    ``repeats``, per model."""
    rows = []
    for n, prompt in enumerate(prompts):
        best = dict.fromkeys(models, float("inf"))
        tokens = 0
        for r in range(repeats):
            for mode, model in models.items():
                with routing(f"prefill/{n}/{r}/{mode}"):  # a new group: an empty KV cache
                    gen = model.generate(prompt, max_tokens=1)
                best[mode] = min(best[mode], gen.latency_s)
                tokens = gen.prompt_tokens
        row = {"prompt_tokens": tokens}
        row.update({f"{m}_tokens_per_s": round(tokens / s, 1) for m, s in best.items()})
        row["speedup"] = round(best["off"] / best["on"], 2)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    return rows


def agreement(
    models: dict[str, LlamaCppBackend], data_dir: Path, limit: int, limits: dict[str, int]
) -> dict:
    """Per suite: items whose calls and scores are identical with flash attention on."""
    out: dict[str, Any] = {}
    for suite in entry_point_suites():
        options = suite.parse_options(SUITE_OPTIONS.get(suite.name))
        data = suite.load(data_dir, options)
        by = suite.breakdown[0] if suite.breakdown else None
        items = stratified_limit(data.items, limits.get(suite.name, limit), by)
        same, differ, seconds = 0, [], dict.fromkeys(models, 0.0)
        for item in items:
            seen = {}
            for mode, model in models.items():
                rec = Recording(model)
                start = time.perf_counter()
                with routing(f"{mode}/{item.group}"):
                    result = suite.run(item, Models(rec, rec), options)
                seconds[mode] += time.perf_counter() - start
                seen[mode] = (rec.texts, result.scores)
            if seen["off"] == seen["on"]:
                same += 1
            else:
                differ.append(
                    {
                        "id": item.id,
                        "off": seen["off"][0][:3],
                        "on": seen["on"][0][:3],
                        "scores": {m: s[1] for m, s in seen.items()},
                    }
                )
            print(item.id, "same" if seen["off"] == seen["on"] else "DIFFERENT", file=sys.stderr)
        out[suite.name] = {
            "items": len(items),
            "identical": same,
            "seconds": {m: round(s, 1) for m, s in seconds.items()},
            "differences": differ,
        }
        print(suite.name, json.dumps(out[suite.name]), file=sys.stderr, flush=True)
    return out


def pick_prompts(path: Path, data_dir: Path, targets: list[int]) -> list[str]:
    """The Table-QA prompts of the main job's selection (the default cap, stratified over
    the subsets) nearest each target length in tokens."""
    from extractbench.suites.tableqa.suite import TABLEQA

    items = stratified_limit(TABLEQA.load(data_dir, TABLEQA.parse_options()).items, 600, "subset")
    prompts = [it.prompt for it in items]
    counts, _ = count_prompt_tokens(path, prompts)
    return [prompts[min(range(len(counts)), key=lambda i: abs(counts[i] - t))] for t in targets]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--limit", type=int, default=4, help="items per suite")
    parser.add_argument("--suite-limit", default="", help="per suite, e.g. minea=2,fda=12")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--prefill-tokens", default="5300,13800")
    parser.add_argument("--skip", default="", help="parts to skip: prefill, answers")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    data_dir = require_data_dir(args.data_dir)
    path = Path(args.model) if args.model else default_model_path()
    models = {
        mode: LlamaCppBackend(
            path,
            n_ctx=20480,
            n_threads=args.threads,
            settings=LlamaCppOptions(n_gpu_layers="0", flash_attn=mode),
        )
        for mode in MODES
    }
    result: dict[str, Any] = {
        "model": path.name,
        "threads": args.threads,
        "flash_attn_resolved": {m: b.load_facts.flash_attn for m, b in models.items()},
    }
    if "prefill" not in args.skip:
        targets = [int(t) for t in args.prefill_tokens.split(",")]
        result["prefill"] = prefill(models, pick_prompts(path, data_dir, targets), args.repeats)
    if "answers" not in args.skip:
        limits = {k: int(v) for k, v in (p.split("=") for p in args.suite_limit.split(",") if p)}
        result["answers"] = agreement(models, data_dir, args.limit, limits)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
