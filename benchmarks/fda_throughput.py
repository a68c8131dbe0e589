"""FDA on the real default model: grouped against shuffled item order, and peak memory.

Runs the same FDA items through one in-process llama-cpp backend (what one xdist worker
does) twice: in grouped order (the items of one chunk consecutively, as the suite runs
them with ``--dist loadgroup``) and in a seeded shuffled order, so llama.cpp's prefix
reuse is hit or missed. Run:

    python benchmarks/fda_throughput.py --groups 6 --threads 2

Prints items/s, prompt tokens/s (prompt tokens as the model counts them, reused prefix
included), accuracy of each order (identical: greedy decoding), and peak RSS of the
process (= one worker).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.fixtures.models import ModelSpec, load_backend  # noqa: E402
from extractbench.suites.fda.items import load_items  # noqa: E402
from extractbench.suites.fda.suite import SUITE  # noqa: E402
from extractbench.suites.model_files import default_model_path  # noqa: E402
from extractbench.suites.protocol import Models  # noqa: E402


def run(backend, items) -> dict:
    """Each item through the FDA suite's own ``run`` (generate and score)."""
    start = time.perf_counter()
    prompt_tokens = 0
    correct = 0.0
    options = SUITE.parse_options()
    for item in items:
        result = SUITE.run(item, Models(backend, backend), options)
        prompt_tokens += result.generation.prompt_tokens
        correct += result.scores["accuracy"]
    wall = time.perf_counter() - start
    return {
        "items": len(items),
        "wall_s": round(wall, 2),
        "items_per_s": round(len(items) / wall, 3),
        "prompt_tokens_per_s": round(prompt_tokens / wall, 1),
        "accuracy": round(correct / len(items), 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=6, help="number of chunks (groups) to use")
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    data_dir = require_data_dir(args.data_dir)
    items = load_items(data_dir).items
    groups = sorted({it.group for it in items})[: args.groups]
    grouped = [it for it in items if it.group in set(groups)]
    shuffled = grouped[:]
    random.Random(0).shuffle(shuffled)
    spec = ModelSpec("llama-cpp", default_model_path(), 0, args.threads, default=True)
    backend = load_backend(spec, grouped)
    result = {
        "groups": len(groups),
        "threads": args.threads,
        "grouped": run(backend, grouped),
        "shuffled": run(backend, shuffled),
    }
    result["speedup_grouped_vs_shuffled"] = round(
        result["shuffled"]["wall_s"] / result["grouped"]["wall_s"], 2
    )
    result["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
