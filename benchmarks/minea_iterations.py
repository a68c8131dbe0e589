"""MINEA extraction cost by number of iterations: calls, tokens and wall time per document.

Extracts the same enriched documents with 1..5 iterations (each a separate extraction:
later pieces see the history of earlier ones, so fewer iterations are not a prefix of
more) through one in-process llama-cpp backend, and prints per document and iteration
count: pieces, calls, threads, prompt and completion tokens, wall seconds, entities,
parse failures and the label-free criteria (share of needles found by n, ns, k0.5).
Judge calls are not included. Run:

    python benchmarks/minea_iterations.py --documents 2 --max-iterations 5 --threads 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.fixtures.models import ModelSpec, load_backend  # noqa: E402
from extractbench.suites.minea.extraction import extract_document  # noqa: E402
from extractbench.suites.minea.items import load_items  # noqa: E402
from extractbench.suites.minea.matching import match_needle  # noqa: E402
from extractbench.suites.minea.needles import Needle  # noqa: E402
from extractbench.suites.minea.options import MineaOptions  # noqa: E402
from extractbench.suites.minea.schema import load_schema  # noqa: E402
from extractbench.suites.model_files import default_model_path  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=2, help="shortest N documents")
    parser.add_argument("--max-iterations", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    data_dir = require_data_dir(args.data_dir)
    items = sorted(load_items(data_dir).items, key=lambda it: it.prompt_chars)[: args.documents]
    schema = load_schema()
    spec = ModelSpec("llama-cpp", default_model_path(), 0, args.threads, default=True)
    backend = load_backend(spec, items)
    rows = []
    for item in items:
        needles = [Needle.from_json(n) for n in item.meta["needles"]]
        for iterations in range(1, args.max_iterations + 1):
            start = time.perf_counter()
            result = extract_document(
                backend,
                schema,
                item.prompt,
                piece_chars=MineaOptions.piece_chars,
                iterations=iterations,
                max_tokens=MineaOptions.max_tokens,
                context_tokens=MineaOptions.context_tokens,
            )
            wall = time.perf_counter() - start
            entities = [e for _, _, e in result.entities]
            hits = [match_needle(n, entities) for n in needles]
            row = {
                "document": item.id,
                "chars": item.prompt_chars,
                "needles": len(needles),
                "iterations": iterations,
                "pieces": len(result.pieces),
                "calls": len(result.calls),
                "threads": result.threads,
                "prompt_tokens": sum(c.prompt_tokens for c in result.calls),
                "completion_tokens": sum(c.completion_tokens for c in result.calls),
                "wall_s": round(wall, 1),
                "entities": len(entities),
                "parse_failures": result.parse_failures,
                **{c: round(sum(h[c] for h in hits) / len(hits), 3) for c in ("n", "ns", "k0.5")},
            }
            rows.append(row)
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
