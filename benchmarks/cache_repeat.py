"""The generation cache: the same run twice with an empty cache, then resumed after Ctrl-C.

1. ``pytest suites/SUITE -n WORKERS --limit N`` with a fresh ``--cache-dir``: wall time.
2. The identical command again: wall time, its share of the first (target: under 5%),
   whether the aggregates are identical, how many calls the cache answered.
3. With another fresh cache: the run is interrupted (SIGINT) after ``--stop-after`` seconds,
   then started again: how many generations the restart found in the cache, and its wall
   time against run 1.
Run:

    python benchmarks/cache_repeat.py --suite fda --limit 60 --workers 2
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def command(args: argparse.Namespace, cache: Path, record: Path) -> list[str]:
    out = [
        sys.executable, "-m", "pytest", f"suites/{args.suite}", "-n", str(args.workers),
        "--limit", str(args.limit), "--cache-dir", str(cache), "--report-json", str(record),
        "-q", "-p", "no:cacheprovider",
    ]  # fmt: skip
    return out + (["--data-dir", args.data_dir] if args.data_dir else [])


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, capture_output=True, check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="fda")
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--stop-after", type=float, default=60.0, help="seconds before Ctrl-C")
    parser.add_argument("--data-dir", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        first = timed(command(args, folder / "c1", folder / "r1.json"))
        second = timed(command(args, folder / "c1", folder / "r2.json"))
        r1 = json.loads((folder / "r1.json").read_text())
        r2 = json.loads((folder / "r2.json").read_text())
        proc = subprocess.Popen(
            command(args, folder / "c2", folder / "r3.json"),
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            # a shell's background job ignores SIGINT, and children inherit that: give
            # pytest the default disposition so it turns SIGINT into KeyboardInterrupt
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )  # fmt: skip
        time.sleep(args.stop_after)
        proc.send_signal(signal.SIGINT)
        proc.wait(120)
        r3 = json.loads((folder / "r3.json").read_text())
        resumed = timed(command(args, folder / "c2", folder / "r4.json"))
        r4 = json.loads((folder / "r4.json").read_text())
    print(
        json.dumps(
            {
                "suite": args.suite,
                "items": r1["counts"]["items"],
                "first_wall_s": round(first, 1),
                "repeat_wall_s": round(second, 1),
                "repeat_share_of_first": round(second / first, 4),
                "repeat_cached_calls": f"{r2['counts']['cached_calls']}/{r2['counts']['calls']}",
                "repeat_aggregates_identical": r1["aggregates"] == r2["aggregates"],
                "interrupted_after_s": args.stop_after,
                "interrupted_items_scored": r3["counts"]["scored"],
                "resumed_cached_calls": f"{r4['counts']['cached_calls']}/{r4['counts']['calls']}",
                "resumed_wall_s": round(resumed, 1),
                "resumed_aggregates_identical": r1["aggregates"] == r4["aggregates"],
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
