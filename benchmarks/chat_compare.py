"""Chat on against chat off, per suite, on the chat-templated copy of the default model.

Runs the main job twice through the plugin, ``pytest suites/ --limit N --no-cache``, on
:func:`tests.chat_gguf.templated_gguf` (the default Gemma 3 270M GGUF with a Gemma-style
``tokenizer.chat_template`` added), once with ``--chat off`` and once with ``--chat on``,
and reads both run records. Per suite and mode:

- ``metrics``: each aggregate's mean (``record["aggregates"]``);
- ``empty_answers``: items whose prediction is empty (Table QA's article-exact prompt must
  answer);
- ``prefix_hit_rate``: prompt tokens llama.cpp took from its KV cache over all prompt
  tokens of the suite's calls (``reused_prompt_tokens / prompt_tokens``): the group's shared
  part must stay reusable with the template around it;
- ``model_s``: the seconds of the suite's model calls (their latencies summed);
- ``rules``: with chat on, how many answers each parsing rule touched (whole run).

``--limit`` picks items of different groups, so the FDA items share no prefix there; the
items of one FDA chunk (``--fda-group``, 12 keys of one chunk) are run apart in both modes
for FDA's prefix reuse.

Run (niced; ``--limit 2`` took 41 min with chat off and 11 min with it on, on 2 cores
under load 3.5-5; the table is in docs/chat.md):

    nice python benchmarks/chat_compare.py --limit 2 --data-dir ../shared/data -- \\
        --suite-option minea.iterations=1

The 270M model is a base model, never trained on this template: the comparison shows what
the chat path costs and keeps (prefix reuse, non-empty answers), not an instruct model's
scores. Prints JSON (and, with ``--markdown``, the table docs/chat.md holds).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extractbench.fixtures.data import require_data_dir  # noqa: E402
from tests.chat_gguf import templated_gguf  # noqa: E402

MODES = ("off", "on")


def run_mode(
    model: Path, mode: str, args: argparse.Namespace, folder: Path, select: list[str] | None = None
) -> dict:
    """``pytest suites/`` with ``--chat MODE``; its run record and wall seconds.

    Raises:
        RuntimeError: pytest exited with a status other than 0 (gates passed) or 1 (a gate
            failed: the base model may score low), or wrote no record.
    """
    record = folder / f"chat-{mode}{'-group' if select else ''}.json"
    chosen = select or ["suites/", "--limit", str(args.limit)]
    command = [
        sys.executable, "-m", "pytest", *chosen, "-q", "-p", "no:cacheprovider",
        "--model", str(model), "--chat", mode, "--no-cache",
        "--data-dir", str(args.data_dir), "--report-json", str(record), "-n", str(args.workers),
        *args.pytest_args,
    ]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1) or not record.is_file():
        tail = (done.stdout + done.stderr).strip().splitlines()[-15:]
        raise RuntimeError(f"--chat {mode}: pytest exited {done.returncode}:\n" + "\n".join(tail))
    return {"record": json.loads(record.read_text()), "wall_s": round(wall, 1)}


def per_suite(record: dict) -> dict[str, dict]:
    """The per-suite comparison columns of one run record (see the module docstring)."""
    out: dict[str, dict] = {}
    for item in record["items"]:
        row = out.setdefault(
            item["suite"],
            {"items": 0, "empty_answers": 0, "prompt_tokens": 0, "reused": 0, "model_s": 0.0},
        )
        row["items"] += 1
        row["empty_answers"] += item["prediction"] in ("", None, [], {})
        for call in item["calls"]:
            row["prompt_tokens"] += call.get("prompt_tokens") or 0
            row["reused"] += call.get("reused_prompt_tokens") or 0
            row["model_s"] += call.get("latency_s") or 0.0
    for name, row in out.items():
        row["prefix_hit_rate"] = round(row["reused"] / max(row["prompt_tokens"], 1), 3)
        row["model_s"] = round(row["model_s"], 1)
        row["metrics"] = {
            key.split("/", 1)[1]: round(agg["mean"], 4)
            for key, agg in record["aggregates"].items()
            if key.split("/", 1)[0] == name
        }
    return out


def markdown(result: dict) -> str:
    """The comparison as a Markdown table, one row per suite and metric."""
    lines = [
        "| suite | metric | chat off | chat on |",
        "|---|---|---|---|",
    ]
    off, on = result["suites"]["off"], result["suites"]["on"]
    for name in sorted(off):
        for metric in sorted(off[name]["metrics"]):
            a, b = off[name]["metrics"][metric], on.get(name, {}).get("metrics", {}).get(metric)
            lines.append(f"| {name} | {metric} | {a} | {b} |")
        for column in ("empty_answers", "prefix_hit_rate", "model_s"):
            lines.append(
                f"| {name} | {column} | {off[name][column]} | {on.get(name, {}).get(column)} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--limit", type=int, default=2, help="items per suite (--limit); 0: only --fda-group"
    )
    parser.add_argument("--workers", type=int, default=1, help="pytest -n")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--markdown", action="store_true", help="also print the table")
    parser.add_argument(
        "--fda-group", default="fda/K112104/c0", help="also run this FDA chunk's items (one "
        "group: its prefix reuse) in both modes; '' to skip",
    )  # fmt: skip
    parser.add_argument("pytest_args", nargs="*", help="more pytest options (after --)")
    args = parser.parse_args()
    args.data_dir = require_data_dir(args.data_dir)
    model = templated_gguf()
    result: dict = {"model": model.name, "limit": args.limit, "suites": {}, "runs": {}}
    with tempfile.TemporaryDirectory() as folder:
        for mode in MODES if args.limit else ():  # --limit 0: the FDA group alone
            done = run_mode(model, mode, args, Path(folder))
            record = done["record"]
            result["suites"][mode] = per_suite(record)
            result["runs"][mode] = {
                "wall_s": done["wall_s"],
                "exit_status": record["exit_status"],
                "chat": record["model"].get("chat"),
                "rules": (record.get("chat") or {}).get("rules"),
                "examples": (record.get("chat") or {}).get("examples"),
            }
            print(mode, json.dumps(result["suites"][mode]), file=sys.stderr, flush=True)
        for mode in MODES if args.fda_group else ():
            select = ["suites/fda", "-k", args.fda_group.replace("/", " and "), "--allow-subset"]
            done = run_mode(model, mode, args, Path(folder), select)
            group = per_suite(done["record"])["fda"]
            result.setdefault("fda_group", {})[mode] = group
            print(mode, args.fda_group, json.dumps(group), file=sys.stderr, flush=True)
    print(json.dumps(result, indent=1))
    if args.markdown and args.limit:
        print(markdown(result))


if __name__ == "__main__":
    main()
