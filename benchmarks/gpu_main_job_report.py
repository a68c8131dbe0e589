"""The table of ``benchmarks/gpu_main_job.sh``'s rows, from its log and the files it wrote.

    python benchmarks/gpu_main_job_report.py reports/gpu/main-job.jsonl reports/gpu

One line per row in the log (exit status, wall seconds, cut or not, largest GPU memory);
for a pytest row, from its run record: the verdict, each suite's items and items/s (items
over the record's wall time; suites run side by side on the workers) and its first
aggregate; for the gpu_throughput rows, that script's own ``--report`` of their logs (the
hf and lm-eval rows; the GPU-CPU answer agreement on the 200 items). Rows not in the log
are printed as not measured.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROWS = ("main", "serve", "hf", "agree-gpu", "agree-cpu")


def pytest_lines(record_path: Path) -> list[str]:
    """Verdict and per-suite items, items/s and first aggregate of one run record."""
    try:
        record = json.loads(record_path.read_text())
    except (OSError, ValueError) as exc:
        return [f"    record {record_path}: not readable ({exc})"]
    verdict = (record.get("verdict") or {}).get("word", "?")
    wall = float(record.get("duration_s") or 0.0)
    lines = [f"    verdict {verdict}, exit {record.get('exit_status')}, {wall:.1f} s, "
             f"complete {record.get('complete')}"]  # fmt: skip
    per_suite: dict[str, int] = {}
    for item in record.get("items", []):
        per_suite[item["suite"]] = per_suite.get(item["suite"], 0) + 1
    for suite, count in sorted(per_suite.items()):
        first = next((f"{k} {v['mean']:.3f} (n={v['n']})" for k, v in sorted(record.get("aggregates", {}).items())
                      if k.startswith(f"{suite}/")), "no aggregate")  # fmt: skip
        rate = count / wall if wall else 0.0
        lines.append(f"    {suite}: {count} items, {rate:.2f} items/s over the run, {first}")
    return lines


def main(log: Path, out: Path) -> int:
    """Print the table; 0 (it decides nothing), 2 for a log line it cannot read."""
    rows = {}
    if log.is_file():
        for line in log.read_text().splitlines():
            if line.strip():
                try:
                    entry = json.loads(line)
                    rows[entry["row"]] = entry
                except (ValueError, TypeError, KeyError) as exc:
                    print(
                        f"error: {log}: not a line of gpu_main_job.sh's log ({exc})",
                        file=sys.stderr,
                    )
                    return 2
    for name in ROWS:
        entry = rows.get(name)
        if entry is None:
            print(f"{name}: not measured")
            continue
        cut = ", cut at its budget" if entry["cut"] else ""
        print(f"{name}: exit {entry['rc']}, {entry['wall_s']} s{cut}, GPU memory max "
              f"{entry['gpu_memory_max_mib']} MiB: {entry['command']}")  # fmt: skip
        if name in ("main", "serve"):
            print("\n".join(pytest_lines(out / f"{name}.json")))
    for sub in ("hf.jsonl", "agree.jsonl"):
        if (out / sub).is_file():
            print(f"--- benchmarks/gpu_throughput.py --report --log {out / sub}")
            subprocess.call(
                [
                    sys.executable,
                    "benchmarks/gpu_throughput.py",
                    "--report",
                    "--log",
                    str(out / sub),
                ]
            )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path, help="gpu_main_job.sh's log (one JSON line per row)")
    parser.add_argument("out", type=Path, help="the folder the rows wrote their records to")
    args = parser.parse_args()
    sys.exit(main(args.log, args.out))
