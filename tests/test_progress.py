"""Progress lines of a long run (``--progress``): the arithmetic on a fake clock, and
black-box through pytester that the controller alone prints them (serial and -n 2)."""

from __future__ import annotations

import re
import sys
import time

import pytest

from extractbench.plugins.run.progress import Heartbeat, Progress, duration_text
from tests.conftest import TOY_SUITE
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
    # a suite's first item: its line at once (1 item in 10 s, 3 left: ETA 30 s)
    assert lines == [
        "extractbench progress: fda 1/4 items (25%), 0.10 items/s, 1.5 generated tokens/s, "
        "ETA 30.0 s"
    ]
    lines.clear()
    now[0] = 125.0
    progress.item(entry("m", suite="minea", tokens=0), 5.0, totals)  # minea started at 120
    assert lines == [
        "extractbench progress: minea 1 items, 0.20 items/s, 1.0 generated tokens/s, ETA unknown"
    ]
    lines.clear()
    now[0] = 130.0
    progress.item(entry("b", outcome="failed"), 10.0, totals)
    progress.item(entry("b"), 10.0, totals)  # the same item again (another report)
    # at 130 s, 30 s after the last lines: fda 2 items in 30 s (0.0667/s, 30 tokens:
    # 1.0 tok/s), 2 left at its measured 10 s an item: ETA 20 s; the run: 3 items in 30 s,
    # 2 left of fda's 4 (minea's total unknown) at fda's 10 s an item: 20 s
    assert lines == [
        "extractbench progress: fda 2/4 items (50%), 1 failed, 0.07 items/s, "
        "1.0 generated tokens/s, ETA 20.0 s",
        "extractbench progress: minea 1 items, 0.10 items/s, 0.5 generated tokens/s, ETA unknown",
        "extractbench progress: run: 3/4 items of 1 suite(s), 30.0 s so far, ETA 20.0 s",
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


def test_a_long_item_gets_lines_every_interval_without_ending():
    """The timer's tick prints while no item ends (a MINEA item iterating for minutes),
    naming the item running longest."""
    now = [0.0]
    lines: list[str] = []
    progress = Progress(60.0, lines.append, clock=lambda: now[0])
    progress.started("suites/minea/test_minea.py::test_minea[minea/doc1]")
    now[0] = 30.0
    progress.tick()
    assert lines == []  # not yet an interval
    for minute in (1, 2, 3):
        now[0] = 60.0 * minute + 0.5
        progress.tick()
    assert len(lines) == 3
    assert lines[-1] == (
        "extractbench progress: run: 0 items in 3 min 0 s, 1 running, longest minea/doc1 "
        "for 3 min 0 s"
    )
    progress.item(entry("minea/doc1", suite="minea"), 180.5, {"minea": 2},
                  "suites/minea/test_minea.py::test_minea[minea/doc1]")  # fmt: skip
    assert progress.running == {}


def test_the_run_line_counts_suites_known_only_from_collection():
    """Under xdist the controller learns a suite's total from the collected node ids, so a
    suite none of whose items has ended (MINEA after FDA) is in the run's total and ETA,
    and the running item is named without xdist's ``@group`` suffix."""
    now = [0.0]
    lines: list[str] = []
    progress = Progress(60.0, lines.append, clock=lambda: now[0])
    fda = [f"suites/fda/test_fda.py::test_fda[fda/d{i}/c0/k]@fda/d{i}/c0" for i in (1, 2)]
    minea = [f"suites/minea/test_minea.py::test_minea[minea/d{i}]@minea/d{i}" for i in (1, 2)]
    progress.expect([*fda, *minea, "tests/test_x.py::test_y[other/1]"], {"fda", "minea"})
    assert progress.totals == {"fda": 2, "minea": 2}
    progress.started(minea[0])
    for i, nodeid in enumerate(fda, start=1):
        now[0] = 10.0 * i
        progress.item(entry(f"fda/d{i}/c0/k"), 10.0, {"fda": 2}, nodeid)
    now[0] = 80.0
    progress.tick()
    assert lines[-1] == (
        "extractbench progress: run: 2/4 items of 2 suite(s), 1 min 20 s so far, ETA at least "
        "1 min 20 s (minea not yet timed), 1 running, longest minea/d1 for 1 min 20 s"
    )


def test_the_eta_is_each_suite_s_measured_time_per_item_never_below_a_running_item():
    """Two workers: FDA's fields take 1 s, a MINEA document 100 s. The ETA counts MINEA's
    documents left at MINEA's own 100 s, not at the run's mean rate (which its quick FDA
    items make about 1 s an item), and a document running for 10 minutes keeps the ETA at
    10 minutes or more."""
    now = [0.0]
    lines: list[str] = []
    progress = Progress(60.0, lines.append, clock=lambda: now[0])
    node = lambda suite, i: f"suites/{suite}/t.py::test_{suite}[{suite}/d{i}]"  # noqa: E731
    progress.expect([node("fda", i) for i in range(20)] + [node("minea", i) for i in range(4)],
                    {"fda", "minea"})  # fmt: skip
    progress.started(node("minea", 0))
    for i in range(10):  # ten FDA fields of 1 s each on the other worker
        progress.started(node("fda", i))
        now[0] = i + 1.0
        progress.item(entry(f"fda/d{i}"), 1.0, {"fda": 20}, node("fda", i))
    now[0] = 100.0
    progress.item(entry("minea/d0", suite="minea"), 100.0, {"minea": 4}, node("minea", 0))
    # the lines are due: 10 FDA fields left at 1 s (10 s) and 3 MINEA documents at their
    # own 100 s (300 s), over the 2 items seen running at once
    assert lines[-2].endswith("minea 1/4 items (25%), 0.01 items/s, 0.1 generated tokens/s, "
                              "ETA 2 min 30 s")  # fmt: skip
    assert lines[-1].endswith("run: 11/24 items of 2 suite(s), 1 min 40 s so far, ETA 2 min 35 s")
    progress.started(node("minea", 1))
    now[0] = 700.0  # the document has run 10 min: no ETA below that
    progress.tick()
    assert lines[-1].endswith("ETA 10 min 0 s, 1 running, longest minea/d1 for 10 min 0 s")


def test_events_and_the_heartbeat_thread():
    lines: list[str] = []
    progress = Progress(0.05, lines.append)
    progress.event("collected 3 items in 0.1 s")
    progress.started("t[fda/a]")
    beat = Heartbeat(progress).start()
    deadline = time.monotonic() + 10
    while len(lines) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    beat.stop()
    assert lines[0] == "extractbench progress: collected 3 items in 0.1 s"
    assert len(lines) >= 3 and "1 running, longest fda/a for" in lines[-1]
    silent: list[str] = []
    Progress(0, silent.append).event("x")
    assert silent == []


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
    # the timer's lines may follow a progress dot on the same line
    done = re.findall(r"extractbench progress: toy done.*", out)
    assert len(done) == 1, out[-3000:]
    assert done[0].startswith("extractbench progress: toy done: 24 items in ")
    periodic = [line for line in out.splitlines() if line.startswith("extractbench progress: toy ")]
    assert any("/24 items (" in line and "ETA" in line for line in periodic), out[-3000:]
    said = [
        line for line in re.findall(r"extractbench progress: .*", out) if "collecting" not in line
    ]
    assert said[0].startswith("extractbench progress: collected 24 items in "), said[:3]
    loads = [line for line in said if " loaded in " in line]
    assert loads and all(line.startswith("extractbench progress: model ") for line in loads)
    assert len(loads) <= (2 if mode else 1)  # one per process that loaded it
    assert any(line.startswith("extractbench progress: run: ") and "ETA" in line for line in said)
    # pytest's own [NN%] is hidden (it passed 100%: the gate cases count too)
    assert not re.search(r"\[ ?\d+%\]", out), out[-3000:]
    assert "PytestAssertRewriteWarning" not in out + result.stderr.str()


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


def test_no_assert_rewrite_warning_when_the_plugin_is_imported_first(toy):
    """An installed plugin is imported before pytest reads its ``pytest_plugins``, so
    pytest cannot rewrite ``fixtures.plugin`` and warned on every run; the module opts out."""
    script = (
        "import sys, extractbench.fixtures.plugin, pytest; sys.exit(pytest.main(["
        "'-W', 'error::pytest.PytestAssertRewriteWarning', "
        "'--backend', 'fake', '--data-dir', 'data', '-p', 'no:cacheprovider', "
        "'--no-step-summary', '--report-json', 'run.json']))"
    )
    result = toy.run(sys.executable, "-c", script)
    assert result.ret == 0, result.stdout.str()[-2000:] + result.stderr.str()[-2000:]
    assert "PytestAssertRewriteWarning" not in result.stdout.str() + result.stderr.str()


def test_lines_while_a_long_item_runs_in_this_process(toy):
    """Serial: the timer's lines reach the terminal while an item runs (its output is
    captured by pytest), naming the item."""
    toy.makeconftest(
        (toy.path / "conftest.py").read_text()
        + "\nimport time\n\ndef pytest_runtest_call(item):\n"
        + "    if item.nodeid.endswith('[toy/d0/applicant]') or '[toy/d0/applicant]@' in item.nodeid:\n"
        + "        time.sleep(2.5)\n"
    )
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "-p", "no:cacheprovider", "--no-step-summary",
        "--report-json", "run.json", "--progress", "0.5",
    )  # fmt: skip
    assert result.ret == 0
    running = re.findall(
        r"extractbench progress: run: 0 items .*longest toy/d0/applicant for.*", result.stdout.str()
    )
    assert len(running) >= 2, result.stdout.str()[-3000:]


def test_a_long_collection_gets_a_line_after_10_s_then_every_interval():
    now = [0.0]
    lines: list[str] = []
    progress = Progress(30.0, lines.append, clock=lambda: now[0])
    progress.collection(started=True)
    for t in (5.0, 9.9):
        now[0] = t
        progress.tick()
    assert lines == []
    now[0] = 10.0
    progress.tick()
    now[0] = 25.0
    progress.tick()  # within the interval of the last line
    now[0] = 40.0
    progress.tick()
    assert lines == [
        "extractbench progress: collecting the selected suites' items: 10.0 s so far",
        "extractbench progress: collecting the selected suites' items: 40.0 s so far",
    ]
    progress.collection(started=False)
    now[0] = 100.0
    progress.tick()
    assert len(lines) == 2  # nothing started yet, nothing more to say


SLOW_LOAD = TOY_SUITE.replace(
    '    path = data_dir / "toy.jsonl"\n', '    time.sleep(11)\n    path = data_dir / "toy.jsonl"\n'
)


def test_a_collection_past_10_s_says_so_while_it_lasts(toy):
    assert SLOW_LOAD != TOY_SUITE
    toy.makepyfile(toy_suite=SLOW_LOAD)
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--progress", "5", "--no-cache"
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    result.stdout.fnmatch_lines(
        ["extractbench progress: collecting the selected suites' items: 1*.* s so far"]
    )
