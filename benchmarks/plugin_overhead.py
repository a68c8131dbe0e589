"""Plugin overhead per item: the same N-item parametrized test with and without extractbench.

Both runs use the deterministic fake model, so the difference is the plugin's own cost
(parametrizing from a loader, the score fixture, report attributes, controller-side
aggregation, gates and the run record). Run:

    python benchmarks/plugin_overhead.py --items 3000

Prints wall time for plain pytest and for extractbench, with -n 0 and -n 2, and the
overhead per item in milliseconds (target: under 2 ms).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SUITE = """
import json
from pathlib import Path
import pytest
from extractbench.suites.item import Item, SuiteData

def load(data_dir: Path, options: dict) -> SuiteData:
    rows = json.loads((data_dir / "rows.json").read_text())
    return SuiteData([Item(id=f"toy/{i}", group=f"toy/g{i // 10}", prefix=f"text {i}\\nkey: v{i}\\n", suffix="key:",
                           reference=f"v{i}", meta={"key": f"k{i % 7}"}, max_tokens=8) for i in rows])

@pytest.mark.suite("toy", load=load, breakdown="key")
def test_toy(bench_item, model, score):
    generation = model.generate(bench_item.prompt, max_tokens=8)
    score.record_generation(generation)
    score("accuracy", float(bench_item.reference in generation.text))
"""

PLAIN = """
import json
from pathlib import Path
import pytest
from extractbench.fixtures.models.fake.backend import FakeBackend

ROWS = json.loads((Path(__file__).parent / "data" / "rows.json").read_text())
MODEL = FakeBackend()

@pytest.mark.parametrize("i", ROWS, ids=[f"toy/{i}" for i in ROWS])
def test_plain(i):
    generation = MODEL.generate(f"text {i}\\nkey: v{i}\\nkey:", max_tokens=8)
    assert f"v{i}" in generation.text
"""


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(
            f"benchmark run failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout[-2000:]}"
        )
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=3000, help="number of items (default 3000)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs per setting; the minimum is kept"
    )
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "data").mkdir()
        (root / "data" / "rows.json").write_text(json.dumps(list(range(args.items))))
        (root / "test_suite.py").write_text(SUITE)
        (root / "test_plain.py").write_text(PLAIN)
        (root / "conftest.py").write_text("")
        (root / "pyproject.toml").write_text(
            "[tool.pytest.ini_options]\naddopts = '-p no:cacheprovider'\n"
        )
        base = [sys.executable, "-m", "pytest", "-q"]
        for workers in ("0", "2"):
            plain = min(
                timed(base + ["-n", workers, "-p", "no:extractbench", "test_plain.py"], root)
                for _ in range(args.repeat)
            )
            bench = min(
                timed(
                    base
                    + [
                        "-n",
                        workers,
                        "--backend",
                        "fake",
                        "--data-dir",
                        "data",
                        "--dist",
                        "loadgroup",
                        "--report-json",
                        "record.json",
                        "test_suite.py",
                    ],
                    root,
                )
                for _ in range(args.repeat)
            )
            per_item_ms = (bench - plain) / args.items * 1000
            results[f"-n {workers}"] = {
                "plain_s": round(plain, 3),
                "extractbench_s": round(bench, 3),
                "overhead_ms_per_item": round(per_item_ms, 3),
            }
    print(json.dumps({"items": args.items, "results": results}, indent=1))


if __name__ == "__main__":
    main()
