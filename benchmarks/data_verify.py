"""What verifying the data on use costs: every file a suite's manifest lists, checked
against its sha256 (``suites.datasets.verify.verify_suite_data``), per suite and for all.

- ``first``: a fresh digest memo, so every file is read and hashed (the first run on a
  machine, or after the files changed); the page cache is warmed first by one untimed
  pass, so this is hashing, not the disk.
- ``memo hit``: a new memo object on the same memo file (what a later run, or each xdist
  worker, pays): one stat per file and one SQLite read of the memo.

Medians of ``--repeat`` timings. Run:

    python benchmarks/data_verify.py --data-dir ../shared/data --repeat 5
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from extractbench.suites.datasets import verify
from extractbench.suites.datasets.manifest import load_manifest
from extractbench.suites.datasets.verify import DigestMemo, verify_suite_data


def timed(folder: Path, suites: list[str], db: Path) -> tuple[float, int, int]:
    """Seconds to verify ``suites`` with a new memo object on ``db``; files hashed and
    answered from the memo."""
    manifest = load_manifest()
    start = time.perf_counter()
    memo = DigestMemo(db)
    for suite in suites:
        verify_suite_data(folder, suite, manifest=manifest, memo=memo)
    memo.close()
    return time.perf_counter() - start, memo.hashed, memo.remembered


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    manifest = load_manifest()
    verify.RACY_NS = 0  # the data files are old; nothing to wait for
    groups = {name: [name] for name in manifest.suites} | {"all": list(manifest.suites)}
    with tempfile.TemporaryDirectory() as tmp:
        timed(args.data_dir, groups["all"], Path(tmp) / "warm.sqlite")  # page cache
        print(f"{'suites':<11} {'files':>5} {'MB':>6} {'first (s)':>10} {'memo hit (ms)':>14}")
        for name, suites in groups.items():
            files = manifest.files(suites)
            mb = sum(e.size for e in files.values()) / 1e6
            first, hit = [], []
            for i in range(args.repeat):
                db = Path(tmp) / f"{name}-{i}.sqlite"
                seconds, hashed, _ = timed(args.data_dir, suites, db)
                calls = sum(len(manifest.suites[s]) for s in suites)
                assert hashed == len(files) or hashed == calls
                first.append(seconds)
                seconds, hashed, remembered = timed(args.data_dir, suites, db)
                assert hashed == 0 and remembered == calls
                hit.append(seconds)
            print(
                f"{name:<11} {len(files):>5} {mb:>6.1f} {statistics.median(first):>10.3f} "
                f"{1000 * statistics.median(hit):>14.1f}"
            )


if __name__ == "__main__":
    main()
