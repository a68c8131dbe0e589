"""Progress lines of a long run (``--progress``): the arithmetic on a fake clock, and
black-box through pytester that the controller alone prints them (serial and -n 2)."""

from __future__ import annotations

import pytest

from plugins.run.progress import Progress, duration_text
from tests.test_plugin import MODES


def entry(item_id: str, suite: str = "fda", tokens: int = 10, outcome: str = "passed") -> dict:
    return {"id": item_id, "suite": suite, "outcome": outcome,
            "calls": [{"completion_tokens": tokens}, {"completion_tokens": 5}]}  # fmt: skip


def test_rates_eta_and_suite_end_on_a_fake_clock():
    now = [100.0]
    lines: list[str] = []
    progress = Progress(30.0, lines.append, clock=lambda: now[0])
    totals = {"fda": 4, "minea": None}
    now[0] = 110.0  # the first item took 10 s: the suite started at 100
    progress.item(entry("a"), 10.0, totals)
    assert lines == []  # less than 30 s since the start of the run
    now[0] = 125.0
    progress.item(entry("m", suite="minea", tokens=0), 5.0, totals)  # minea started at 120
    assert lines == []
    now[0] = 130.0
    progress.item(entry("b", outcome="failed"), 10.0, totals)
    progress.item(entry("b"), 10.0, totals)  # the same item again (another report)
    # at 130 s: fda 2 items in 30 s (0.0667/s, 30 tokens: 1.0 tok/s), 2 left: ETA 30 s
    assert lines == [
        "extractbench progress: fda 2/4 items (50%), 1 failed, 0.07 items/s, "
        "1.0 generated tokens/s, ETA 30.0 s",
        "extractbench progress: minea 1 items, 0.10 items/s, 0.5 generated tokens/s, ETA unknown",
    ]
    lines.clear()
    now[0] = 140.0
    progress.item(entry("c"), 1.0, totals)
    progress.item(entry("d"), 1.0, totals)
    assert lines == [
        "extractbench progress: fda done: 4 items in 40.0 s, 1 failed, 0.10 items/s, "
        "1.5 generated tokens/s"
    ]
    assert duration_text(3725) == "1 h 2 min" and duration_text(125) == "2 min 5 s"


def test_progress_zero_prints_nothing():
    lines: list[str] = []
    progress = Progress(0, lines.append, clock=lambda: 1e9)
    progress.item(entry("a"), 1.0, {"fda": 1})
    assert lines == []


@pytest.mark.parametrize("mode", MODES)
def test_the_controller_prints_each_suites_progress_once(toy, mode):
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "-p", "no:cacheprovider", "--no-step-summary",
        "--report-json", "run.json", "--progress", "0.000001", *mode,
    )  # fmt: skip
    assert result.ret == 0
    out = result.stdout.str()
    done = [line for line in out.splitlines() if line.startswith("extractbench progress: toy done")]
    assert len(done) == 1, out[-3000:]
    assert done[0].startswith("extractbench progress: toy done: 24 items in ")
    periodic = [line for line in out.splitlines() if line.startswith("extractbench progress: toy ")]
    assert any("/24 items (" in line and "ETA" in line for line in periodic), out[-3000:]


def test_progress_off_and_a_bad_value(toy):
    args = [
        "--backend",
        "fake",
        "--data-dir",
        "data",
        "-p",
        "no:cacheprovider",
        "--no-step-summary",
    ]
    result = toy.runpytest_subprocess(*args, "--report-json", "run.json", "--progress", "0")
    assert result.ret == 0 and "extractbench progress" not in result.stdout.str()
    result = toy.runpytest_subprocess(*args, "--progress", "-1")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--progress -1.0: must be a number of seconds >= 0*"])
