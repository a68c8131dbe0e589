"""Where one item's time goes, on the default model: its suite's ``run`` profiled in process.

Loads the suite's items (``--id`` one of them, or ``--longest`` the one with the longest prompt
among those whose id contains the text), loads the default model sized for that item as a run
does (``load_backend``), counts the prompt's tokens, and runs the item through the suite's
``run`` under cProfile. Prints one JSON object of stages in seconds:

- ``items_s``: loading the suite's items and choosing the one;
- ``model_load_s``: ``load_backend`` for the item (context sized to its prompt: ``n_ctx``);
- ``tokenise_s``: one ``count_tokens`` of the prompt;
- ``run_s``: the suite's ``run`` (prompt building, every model call, scoring);
- ``model_s``, ``prefill_s``: the model calls' wall time and the part of it reading prompts
  (llama.cpp's ``t_p_eval``), from the calls' generations; ``run_s - model_s`` is the rest;

then the profile's slowest functions by cumulative time. Run:

    python benchmarks/item_profile.py --suite tableqa --longest syn5 --threads 2 --data-dir DATA
    python benchmarks/item_profile.py --suite minea --id minea/K160365 --data-dir DATA
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.fixtures.models import ModelSpec, load_backend  # noqa: E402
from extractbench.suites.model import Generation  # noqa: E402
from extractbench.suites.model_files import default_model_path  # noqa: E402
from extractbench.suites.protocol import Models  # noqa: E402
from extractbench.suites.registry import Registry  # noqa: E402


class Timed:
    """The backend, keeping every generation it returns (their latency and prefill)."""

    def __init__(self, backend: Any) -> None:
        self._backend, self.generations = backend, []
        self.info, self.capabilities = backend.info, backend.capabilities

    def count_tokens(self, text: str) -> int:
        return self._backend.count_tokens(text)

    def generate(self, prompt: str, **kwargs: Any) -> Generation:
        generation = self._backend.generate(prompt, **kwargs)
        self.generations.append(generation)
        return generation


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", required=True)
    chosen = parser.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--id", help="the item's id")
    chosen.add_argument("--longest", metavar="TEXT", help="the longest prompt of ids with TEXT")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--top", type=int, default=20, help="profile lines to print")
    args = parser.parse_args()
    suites = Registry.installed().suites
    if args.suite not in suites:
        sys.exit(f"item_profile.py: --suite {args.suite}: one of {', '.join(sorted(suites))}")
    suite = suites[args.suite]
    options = suite.parse_options({})
    start = time.perf_counter()
    items = suite.load(require_data_dir(args.data_dir), options).items
    if args.id:
        matches = [it for it in items if it.id == args.id]
    else:
        matches = [max((it for it in items if args.longest in it.id), key=lambda it: len(it.prompt),
                       default=None)]  # fmt: skip
    if not matches or matches[0] is None:
        sys.exit(f"item_profile.py: no {args.suite} item {args.id or '*' + args.longest + '*'}")
    item = matches[0]
    items_s = time.perf_counter() - start
    spec = ModelSpec("llama-cpp", default_model_path(), 0, args.threads, default=True)
    start = time.perf_counter()
    backend = load_backend(spec, [item])
    model_load_s = time.perf_counter() - start
    start = time.perf_counter()
    tokens = backend.count_tokens(item.prompt)
    tokenise_s = time.perf_counter() - start
    model = Timed(backend)
    profile = cProfile.Profile()
    start = time.perf_counter()
    profile.enable()
    result = suite.run(item, Models(model, model), options)
    profile.disable()
    run_s = time.perf_counter() - start
    generations = model.generations
    print(json.dumps({
        "item": item.id, "prompt_chars": len(item.prompt), "prompt_tokens": tokens,
        "n_ctx": getattr(backend, "n_ctx", None), "threads": args.threads,
        "items_s": round(items_s, 2), "model_load_s": round(model_load_s, 2),
        "tokenise_s": round(tokenise_s, 4), "run_s": round(run_s, 2), "calls": len(generations),
        "model_s": round(sum(g.latency_s for g in generations), 2),
        "prefill_s": round(sum(g.prefill_s or 0.0 for g in generations), 2),
        "prompt_tokens_read": sum(g.prompt_tokens - (g.reused_prompt_tokens or 0)
                                  for g in generations),
        "generated_tokens": sum(g.completion_tokens for g in generations),
        "scores": result.scores,
    }, indent=1))  # fmt: skip
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(args.top)
    print(text.getvalue())


if __name__ == "__main__":
    main()
