"""Memory and time of collecting the Table-QA suite: the peak RSS of the whole process tree.

Runs ``pytest suites/tableqa --collect-only -n WORKERS`` (or any command after ``--``) and
samples, every ``--interval`` seconds, the resident set size of the command and all its
descendants (psutil): the peak of their sum, the peak of the largest single process, and
the wall time. The derived cache decides whether the questions are built or read: pass
``--fresh-cache`` to collect with an empty one (``XDG_CACHE_HOME`` in a temporary folder,
the default model's file linked in). Run:

    python benchmarks/tableqa_collect_memory.py --workers 8
    python benchmarks/tableqa_collect_memory.py --workers 8 --fresh-cache

Prints one JSON object (MiB, seconds, the exit status and the collected-item line).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024


def _tree_rss(proc: psutil.Process) -> tuple[int, int, int]:
    """(sum of RSS, largest RSS, process count) over ``proc`` and its descendants."""
    total = largest = count = 0
    try:
        family = [proc, *proc.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0, 0, 0
    for p in family:
        try:
            rss = p.memory_info().rss
        except psutil.NoSuchProcess:
            continue
        total += rss
        largest = max(largest, rss)
        count += 1
    return total, largest, count


def measure(command: list[str], env: dict[str, str], interval: float) -> dict[str, object]:
    """Run ``command`` and sample its process tree's RSS until it exits."""
    start = time.perf_counter()
    child = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    proc = psutil.Process(child.pid)
    peak_total = peak_largest = peak_count = 0
    while child.poll() is None:
        total, largest, count = _tree_rss(proc)
        peak_total, peak_largest = max(peak_total, total), max(peak_largest, largest)
        peak_count = max(peak_count, count)
        time.sleep(interval)
    output = child.stdout.read() if child.stdout else ""
    wall = time.perf_counter() - start
    collected = [
        ln for ln in output.splitlines() if re.search(r"\d+ (tests? )?collected|workers \[", ln)
    ]
    return {
        "command": " ".join(command),
        "exit_status": child.returncode,
        "wall_s": round(wall, 1),
        "peak_tree_rss_mib": round(peak_total / MIB),
        "peak_process_rss_mib": round(peak_largest / MIB),
        "processes": peak_count,
        "collected": collected[-2:],
        "tail": output.splitlines()[-3:],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--interval", type=float, default=0.1)
    parser.add_argument("--fresh-cache", action="store_true", help="an empty derived cache")
    parser.add_argument("command", nargs="*", help="a command to measure instead (after --)")
    args = parser.parse_args()
    command = args.command or [
        sys.executable, "-m", "pytest", "suites/tableqa", "--collect-only", "-q",
        "-n", str(args.workers), "-p", "no:randomly",
    ]  # fmt: skip
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        if args.fresh_cache:
            models = Path(env.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "extractbench"
            (Path(cache) / "extractbench").mkdir()
            if (models / "models").is_dir():
                (Path(cache) / "extractbench" / "models").symlink_to(models / "models")
            env["XDG_CACHE_HOME"] = cache
        result = measure(command, env, args.interval)
    result["fresh_cache"] = args.fresh_cache
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
