"""MINEA needles that the keyword criteria cannot tell apart: pairs of needles placed in one
document of which one satisfies k0.5 for the other (the other's name and keywords taken as
an extracted entity), over every document of the default run.

Run (from the repository root; for another commit's code, run it from that checkout with
``PYTHONPATH=.`` so its ``suites`` package is imported):

    python benchmarks/minea_needle_pairs.py

Prints one JSON object: documents, needles, pairs of any types and same-type pairs, and how
many of each satisfy k0.5 in either direction.
"""

from __future__ import annotations

import argparse
import json
import sys
from itertools import combinations
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.suites.minea.items import load_items  # noqa: E402
from extractbench.suites.minea.matching import match_needle  # noqa: E402
from extractbench.suites.minea.needles import Needle  # noqa: E402


def k05(a: Needle, b: Needle) -> int:
    """1 when ``a``'s keywords satisfy k0.5 for ``b`` or ``b``'s for ``a``."""
    return int(
        bool(
            match_needle(a, [{"name": b.name, "keywords": list(b.keywords)}])["k0.5"]
            or match_needle(b, [{"name": a.name, "keywords": list(a.keywords)}])["k0.5"]
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    data_dir = require_data_dir(args.data_dir)
    out = dict.fromkeys(("documents", "needles", "pairs", "pairs_k05", "same_type_pairs",
                         "same_type_pairs_k05"), 0)  # fmt: skip
    for item in load_items(data_dir).items:
        placed = [Needle.from_json(n) for n in item.meta["needles"]]
        out["documents"] += 1
        out["needles"] += len(placed)
        for a, b in combinations(placed, 2):
            hit = k05(a, b)
            out["pairs"] += 1
            out["pairs_k05"] += hit
            if a.type == b.type:
                out["same_type_pairs"] += 1
                out["same_type_pairs_k05"] += hit
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
