"""Table-QA wall time at the default cap, extrapolated from a measured sample.

Reads a run record of the Table-QA suite (e.g. of ``pytest suites/tableqa -n 2 --limit 50``)
and the default-capped item set (``[tool.extractbench.limits] tableqa``, stratified over
the subset as ``--limit`` selects it), counts every capped prompt's tokens with the default
model's tokenizer (no weights), and per subset scales the sample's model time by tokens:

    seconds(subset) = sum(sample latency) / sum(sample prompt tokens) * sum(capped prompt tokens)

(prefill dominates: answers are at most 32 tokens). The predicted wall time divides the
sum over subsets by the record's worker count: each sampled latency was measured with the
other workers generating beside it, so it is the item's share of the whole machine times
the worker count. Run:

    python benchmarks/tableqa_walltime.py --record reports/RUN.json

Prints one JSON object: per subset the sample (items, tokens, seconds), the capped set
(items, tokens) and the extrapolated seconds; the total and the predicted wall time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from extractbench.fixtures.models.llama_cpp.vocab import count_prompt_tokens  # noqa: E402
from extractbench.plugins.run.selection import stratified_limit  # noqa: E402
from extractbench.suites.model_files import default_model_path  # noqa: E402
from extractbench.suites.tableqa.items import load_items  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--record", required=True, help="run record of a Table-QA sample")
    parser.add_argument("--workers", type=int, default=None, help="default: the record's")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    record = json.loads(Path(args.record).read_text(encoding="utf-8"))
    workers = args.workers or int(record.get("settings", {}).get("workers") or 1)
    sample: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for it in record["items"]:
        if it.get("suite") != "tableqa" or it.get("outcome") != "passed":
            continue
        row = sample[it["meta"]["subset"]]
        row["items"] += 1
        row["tokens"] += it["tokens"]["prompt"]
        row["seconds"] += it["latency_s"]
    cap = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["extractbench"]["limits"]
    data_dir = require_data_dir(args.data_dir)
    capped = stratified_limit(load_items(data_dir).items, int(cap["tableqa"]), "subset")
    counts, _ = count_prompt_tokens(default_model_path(), [it.prompt for it in capped])
    full: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for item, tokens in zip(capped, counts, strict=True):
        full[item.meta["subset"]]["items"] += 1
        full[item.meta["subset"]]["tokens"] += tokens
    out: dict[str, object] = {"workers": workers, "cap": int(cap["tableqa"]), "subsets": {}}
    total = 0.0
    for subset in sorted(full):
        s = sample.get(subset)
        seconds = s["seconds"] / s["tokens"] * full[subset]["tokens"] if s else None
        total += seconds or 0.0
        out["subsets"][subset] = {  # type: ignore[index]
            "sample": {k: round(v, 1) for k, v in (s or {}).items()},
            "capped": {k: int(v) for k, v in full[subset].items()},
            "extrapolated_s": None if seconds is None else round(seconds),
        }
    out["model_seconds"] = round(total)
    out["predicted_wall_s"] = round(total / workers)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
