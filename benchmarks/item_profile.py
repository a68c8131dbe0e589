"""Where one item's time goes, on the default model: its suite's ``run`` profiled in process.

Loads the suite's items (``--id`` one of them, or ``--longest`` the one with the longest prompt
among those whose id contains the text), loads the default model sized for that item through
the wrapper a run uses (``caching_backend``), counts the prompt's tokens, and runs the item through the suite's
``run`` under cProfile. Prints one JSON object of stages in seconds:

- ``items_s``: loading the suite's items and choosing the one;
- ``model_load_s``: loading the model for the item (context sized to its prompt: ``n_ctx``);
- ``tokenise_s``: one ``count_tokens`` of the prompt;
- ``run_s``: the suite's ``run`` (prompt building, every model call, scoring);
- ``model_s``, ``prefill_s``: the model calls' latencies summed and the part of them reading
  prompts (llama.cpp's ``t_p_eval``), from the call log a run keeps; ``run_s - model_s`` is
  the rest when the calls ran one after the other (``lanes`` 1); with chains of calls at
  once (``lanes`` 2: MINEA's two extractions) the latencies overlap;

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
from extractbench.fixtures.models import ModelSpec, caching_backend  # noqa: E402
from extractbench.fixtures.models.wrappers import recording_calls  # noqa: E402
from extractbench.suites.item import DataError, Item  # noqa: E402
from extractbench.suites.model import ModelError  # noqa: E402
from extractbench.suites.model_files import default_model_path  # noqa: E402
from extractbench.suites.protocol import Models  # noqa: E402
from extractbench.suites.registry import Registry  # noqa: E402


def positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of at least 1")
    return int(text)


def choose(items: list[Item], item_id: str | None, longest: str | None) -> Item | None:
    """The item with id ``item_id``, else the one with the longest prompt among those whose
    id contains ``longest``; None when there is none."""
    if item_id is not None:
        return next((it for it in items if it.id == item_id), None)
    return max((it for it in items if longest in it.id), key=lambda it: len(it.prompt),
               default=None)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", required=True)
    chosen = parser.add_mutually_exclusive_group(required=True)
    chosen.add_argument("--id", help="the item's id")
    chosen.add_argument("--longest", metavar="TEXT", help="the longest prompt of ids with TEXT")
    parser.add_argument("--threads", type=positive, default=2)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--top", type=positive, default=20, help="profile lines to print")
    args = parser.parse_args()
    suites = Registry.installed().suites
    if args.suite not in suites:
        sys.exit(f"item_profile.py: --suite {args.suite}: one of {', '.join(sorted(suites))}")
    suite = suites[args.suite]
    options = suite.parse_options({})
    start = time.perf_counter()
    try:
        item = choose(suite.load(require_data_dir(args.data_dir), options).items, args.id,
                      args.longest)  # fmt: skip
    except DataError as exc:
        sys.exit(f"item_profile.py: {args.suite}: {exc}")
    if item is None:
        sys.exit(f"item_profile.py: no {args.suite} item {args.id or '*' + args.longest + '*'}")
    items_s = time.perf_counter() - start
    spec = ModelSpec("llama-cpp", default_model_path(), 0, args.threads, default=True)
    # the run's own path: the calls go through the wrapper a run uses (its lanes too: chains
    # of calls at once) and land in its call log
    model = caching_backend(spec, [item], None)
    start = time.perf_counter()
    try:
        backend = model.load()
    except ModelError as exc:
        sys.exit(f"item_profile.py: {exc}")
    model_load_s = time.perf_counter() - start
    start = time.perf_counter()
    tokens = backend.count_tokens(item.prompt)  # type: ignore[attr-defined]
    tokenise_s = time.perf_counter() - start
    calls: list[dict[str, Any]] = []
    profile = cProfile.Profile()
    start = time.perf_counter()
    try:
        with recording_calls(calls):
            profile.enable()
            result = suite.run(item, Models(model, model), options)
    except (ModelError, DataError) as exc:
        sys.exit(f"item_profile.py: {item.id}: {exc}")
    finally:
        profile.disable()
    run_s = time.perf_counter() - start
    print(json.dumps({
        "item": item.id, "prompt_chars": len(item.prompt), "prompt_tokens": tokens,
        "n_ctx": getattr(backend, "n_ctx", None), "threads": args.threads,
        "items_s": round(items_s, 2), "model_load_s": round(model_load_s, 2),
        "tokenise_s": round(tokenise_s, 4), "run_s": round(run_s, 2), "calls": len(calls),
        "lanes": max((c.get("lanes", 1) for c in calls), default=1),
        "model_s": round(sum(c["latency_s"] for c in calls), 2),
        "prefill_s": round(sum(c.get("prefill_s", 0.0) for c in calls), 2),
        "prompt_tokens_read": sum(c["prompt_tokens"] - (c.get("reused_prompt_tokens") or 0)
                                  for c in calls),
        "generated_tokens": sum(c["completion_tokens"] for c in calls),
        "scores": result.scores,
    }, indent=1))  # fmt: skip
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(args.top)
    print(text.getvalue())


if __name__ == "__main__":
    main()
