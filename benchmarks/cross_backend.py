"""The same GGUF through llama-cpp and hf (transformers): do greedy answers agree?

Runs N FDA items (the suite's ``--limit N`` selection, stratified by key) through both
backends in this process, one after the other, and prints per backend wall time and
accuracy, and the share of items whose answers are identical (exactly, and after
stripping whitespace) and whose containment verdicts agree. Needs the ``hf`` extra. Run:

    python benchmarks/cross_backend.py --items 50 --threads 2
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
from extractbench.plugins.run.selection import stratified_limit  # noqa: E402
from extractbench.suites.fda.items import load_items  # noqa: E402
from extractbench.suites.fda.suite import SUITE  # noqa: E402
from extractbench.suites.model_files import default_model_path  # noqa: E402
from extractbench.suites.protocol import Models  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    data_dir = require_data_dir(args.data_dir)
    items = stratified_limit(load_items(data_dir).items, args.items, "key")
    answers: dict[str, list[str]] = {}
    correct: dict[str, list[float]] = {}
    summary: dict[str, dict[str, float]] = {}
    for backend in ("llama-cpp", "hf"):
        spec = ModelSpec(backend, default_model_path(), 0, args.threads, default=True)
        start = time.perf_counter()
        model = load_backend(spec, items)
        loaded = time.perf_counter() - start
        # each item through the FDA suite's own run (generate and score)
        results = [SUITE.run(it, Models(model, model), SUITE.parse_options()) for it in items]
        wall = time.perf_counter() - start - loaded
        answers[backend] = [r.generation.text for r in results]
        correct[backend] = [r.scores["accuracy"] for r in results]
        summary[backend] = {
            "load_s": round(loaded, 1),
            "generate_s": round(wall, 1),
            "accuracy": round(sum(correct[backend]) / len(items), 4),
        }
        del model
    a, b = answers["llama-cpp"], answers["hf"]
    verdicts = [x == y for x, y in zip(correct["llama-cpp"], correct["hf"], strict=True)]
    result = {
        "items": len(items),
        "backends": summary,
        "identical_answers": round(sum(x == y for x, y in zip(a, b, strict=True)) / len(items), 4),
        "identical_after_strip": round(
            sum(x.strip() == y.strip() for x, y in zip(a, b, strict=True)) / len(items), 4
        ),
        "same_verdict": round(sum(verdicts) / len(items), 4),
        "differences": [
            {"id": it.id, "llama-cpp": x, "hf": y}
            for x, y, it in zip(a, b, items, strict=True)
            if x.strip() != y.strip()
        ][:10],
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
