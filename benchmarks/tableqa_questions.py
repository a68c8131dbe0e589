"""Table-QA question building time: the whole protocol, uncached and cached.

Builds every question of the article's protocol without the derived cache (wiki: parse
the WikiTableQuestions HTML, enumerate and sample; syn1-syn5: one seeded table per
question, 9,600 per subset), then times ``load_items`` twice in a fresh cache folder: the
first call builds and caches, the second is what every later collection (each xdist
worker) pays. Run:

    python benchmarks/tableqa_questions.py

Prints seconds and question counts as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.suites.tableqa import synthetic  # noqa: E402
from extractbench.suites.tableqa.questions import sample_questions  # noqa: E402
from extractbench.suites.tableqa.wiki import MAX_HEIGHT, wiki_tables  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    data_dir = require_data_dir(args.data_dir)
    out: dict[str, dict] = {}
    start = time.perf_counter()
    tables = wiki_tables(data_dir)
    parsed = time.perf_counter()
    questions = sample_questions(tables, per_cell=10, seed=0)
    out["wiki"] = {
        "tables": len(tables),
        "parse_s": round(parsed - start, 2),
        "questions_s": round(time.perf_counter() - parsed, 2),
        "questions": len(questions),
    }
    for subset in synthetic.SUBSETS:
        start = time.perf_counter()
        questions, specs = synthetic.sample_questions(subset, 10, 0, range(2, 17), MAX_HEIGHT)
        out[subset] = {
            "tables": len(specs),
            "build_s": round(time.perf_counter() - start, 2),
            "questions": len(questions),
        }
    with tempfile.TemporaryDirectory() as cache:
        os.environ["XDG_CACHE_HOME"] = cache  # a fresh derived cache
        from extractbench.suites.tableqa.items import load_items

        for run in ("first_load_s", "cached_load_s"):
            start = time.perf_counter()
            items = load_items(data_dir).items
            out.setdefault("load_items", {})[run] = round(time.perf_counter() - start, 2)
        out["load_items"]["items"] = len(items)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
