"""Table-QA question generation time: every wiki table, plus N synthetic tables per subset.

No cache is used: wiki tables are parsed from HTML and every table's questions are
enumerated and sampled (10 per (W, r) cell, the article's protocol). Run:

    python benchmarks/tableqa_questions.py --synthetic 1000

Prints seconds and questions for wiki and for each synthetic subset (tables of random
W in 2..16 and H in 1..64, seeded).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fixtures.data import require_data_dir  # noqa: E402
from suites.tableqa import synthetic  # noqa: E402
from suites.tableqa.items import wiki_tables  # noqa: E402
from suites.tableqa.questions import sample_questions  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synthetic", type=int, default=1000, help="tables per synthetic subset")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    data_dir = require_data_dir(args.data_dir, Path(__file__).resolve().parent.parent)
    out = {}
    start = time.perf_counter()
    tables = wiki_tables(data_dir)
    parsed = time.perf_counter()
    questions = sample_questions(tables, per_cell=10, seed=0)
    done = time.perf_counter()
    out["wiki"] = {
        "tables": len(tables),
        "parse_s": round(parsed - start, 2),
        "questions_s": round(done - parsed, 2),
        "questions": len(questions),
    }
    for subset in synthetic.SUBSETS:
        rng = random.Random(subset)
        sizes = [(rng.randint(2, 16), rng.randint(1, 64)) for _ in range(args.synthetic)]
        start = time.perf_counter()
        tables = [synthetic.generate(subset, w, h, i, f"t{i}") for i, (w, h) in enumerate(sizes)]
        made = time.perf_counter()
        questions = sample_questions(tables, per_cell=10, seed=0)
        done = time.perf_counter()
        out[subset] = {
            "tables": len(tables),
            "generate_s": round(made - start, 2),
            "questions_s": round(done - made, 2),
            "questions": len(questions),
        }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
