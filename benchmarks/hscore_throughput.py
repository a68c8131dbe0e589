"""H-Score throughput: tables per second per format on N gold pairs.

Scores each gold table against a perturbed copy (one cell changed, so the similarity
code does real work) with the full metric set of an item: H-Score, error taxonomy,
SacreBLEU and ROUGE-L, and also the H-Score alone. Run:

    python benchmarks/hscore_throughput.py --pairs 1000
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.suites.strucbench.hscore import hscore  # noqa: E402
from extractbench.suites.strucbench.items import load_items  # noqa: E402
from extractbench.suites.strucbench.metrics import table_metrics  # noqa: E402


def perturb(text: str) -> str:
    """Change the first digit (or the first letter) of the text."""
    for i, ch in enumerate(text):
        if ch in "0123456789":
            return text[:i] + str((int(ch) + 1) % 10) + text[i + 1 :]
    return text.replace("a", "e", 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000, help="gold pairs per format")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    data_dir = require_data_dir(args.data_dir)
    items = load_items(data_dir).items
    out = {}
    for fmt in ("raw", "html", "latex"):
        golds = [it.reference for it in items if it.meta["format"] == fmt]
        pairs = [(perturb(golds[i % len(golds)]), golds[i % len(golds)]) for i in range(args.pairs)]
        start = time.perf_counter()
        for pred, gold in pairs:
            hscore(fmt, pred, gold)
        h_only = time.perf_counter() - start
        start = time.perf_counter()
        for pred, gold in pairs:
            table_metrics(fmt, pred, gold)
        full = time.perf_counter() - start
        out[fmt] = {
            "pairs": len(pairs),
            "distinct_golds": len(golds),
            "hscore_tables_per_s": round(len(pairs) / h_only, 1),
            "all_metrics_tables_per_s": round(len(pairs) / full, 1),
        }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
