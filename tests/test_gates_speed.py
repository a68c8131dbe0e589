"""Gates on a statistic (mean, CI bounds) and on n, and speed as a gated, compared and
pytest-benchmark-exported measurement; black-box with the fake model (whose timings are
modelled: ``fixtures.models.fake.backend``), with and without -n 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from extractbench.fixtures.models.fake.backend import DECODE_TOKENS_PER_S, PREFILL_TOKENS_PER_S
from extractbench.plugins.verdict.gates import MEAN_N_FLOOR, GateError, parse_gate
from extractbench.plugins.verdict.speed import change_text, speed_changes, speed_stats
from tests.test_plugin import MODES, run


def _gate(record: dict, expression: str) -> dict:
    return next(g for g in record["gates"] if g["expression"] == expression)


@pytest.mark.parametrize("mode", MODES)
def test_a_gate_on_the_ci_low_fails_where_the_mean_passes(toy, mode):
    """toy/accuracy is 15/24: its mean passes >= 0.5, its Wilson lower bound does not."""
    result, record = run(toy, mode, "--gate", "toy/accuracy>=0.5")
    assert result.ret == 0, result.stdout.str()[-2000:]
    result, record = run(toy, mode, "--gate", "toy/accuracy:ci_low>=0.5")
    assert result.ret == 1 and record["verdict"]["word"] == "FAIL"
    gate = _gate(record, "toy/accuracy:ci_low>=0.5")
    agg = record["aggregates"]["toy/accuracy"]
    assert gate["stat"] == "ci_low" and gate["value"] == agg["ci_low"] < 0.5 < agg["mean"]
    assert gate["passed"] is False and gate["n"] == agg["n"] == 24
    result.stdout.fnmatch_lines(["GATE FAILED  toy/accuracy:ci_low>=0.5: *95% CI*n=24*"])


@pytest.mark.parametrize("mode", MODES)
def test_a_minimum_n_above_the_items_leaves_the_gates_undecided(toy, mode):
    """5 items, a minimum of 6: INCOMPLETE (exit 1), never PASS; a minimum that holds
    decides as usual."""
    args = ("--limit", "5", "--gate", "toy/length>=0.1")
    result, record = run(toy, mode, *args, "--gate", "toy:n>=6")
    assert result.ret == 1 and record["verdict"]["word"] == "INCOMPLETE", result.stdout.str()
    gate = _gate(record, "toy/length>=0.1")
    assert gate["passed"] is None and gate["n"] == 5 and gate["min_n"] == 6
    assert _gate(record, "toy:n>=6")["passed"] is None
    assert any("n=5 below the minimum 6" in r for r in record["verdict"]["reasons"])
    result, record = run(toy, mode, *args, "--gate", "toy/length:n>=5")
    assert result.ret == 0 and _gate(record, "toy/length>=0.1")["min_n"] == 5


def test_a_gate_on_a_mean_of_few_items_warns_in_terminal_junit_and_markdown(toy):
    result, record = run(
        toy, [], "--limit", "5", "--gate", "toy/length>=0.1", "--gate", "toy/length:ci_low>=0.1",
        "--junitxml", "j.xml", "--summary-md", "s.md",
    )  # fmt: skip
    assert result.ret == 0
    mean, low = _gate(record, "toy/length>=0.1"), _gate(record, "toy/length:ci_low>=0.1")
    assert f"n=5 < {MEAN_N_FLOOR}" in mean["warning"] and low["warning"] is None
    result.stdout.fnmatch_lines(
        [f"warning: gate toy/length>=0.1 decides on a mean of n=5 < {MEAN_N_FLOOR}*"]
    )
    assert "decides on a mean of n=5" in (toy.path / "s.md").read_text()
    assert 'name="extractbench.warning.toy/length&gt;=0.1"' in (toy.path / "j.xml").read_text()


@pytest.mark.parametrize("gate", ["toy/accuracy:p99>=0.2", "toy/latency_p95_s:ci_low<=1"])
def test_a_bad_statistic_is_a_usage_error(toy, gate):
    """(``toy:n>0.5``, ``toy>=0.2`` and the like: ``test_gate_expressions_round_trip``)"""
    result, _ = run(toy, [], "--gate", gate)
    assert result.ret == 4
    assert "Traceback" not in result.stderr.str()
    assert gate.split(":")[0].split(">")[0] in result.stderr.str()


def test_gate_expressions_round_trip():
    for text in ("fda/accuracy>=0.3", "fda/accuracy:ci_low>=0.2", "fda:n>=30", "fda/x:ci_high<0.9"):
        assert parse_gate(parse_gate(text).expression).expression == text
    for text in ("fda:n>=0", "fda:n>0.5", "fda:n>=2.5", "fda/accuracy:n<=3"):
        with pytest.raises(GateError, match="positive integer"):
            parse_gate(text)
    with pytest.raises(GateError, match="cannot parse gate 'fda>=0.2'; expected 'suite/metric'"):
        parse_gate("fda>=0.2")


@pytest.mark.parametrize("mode", MODES)
def test_speed_is_measured_gated_and_shown(toy, mode):
    result, record = run(
        toy, mode, "--gate", "toy/decode_tokens_per_s>=10", "--gate", "toy/latency_p95_s<=0.000001",
        "--junitxml", "j.xml", "--summary-md", "s.md",
    )  # fmt: skip
    assert result.ret == 1, result.stdout.str()[-2000:]
    speed = record["speed"]["toy"]
    assert speed["decode_tokens_per_s"] == pytest.approx(DECODE_TOKENS_PER_S)
    assert speed["prefill_tokens_per_s"] == pytest.approx(PREFILL_TOKENS_PER_S)
    assert speed["calls"] == 24 and speed["cached_calls"] == 0 and speed["cached_share"] == 0
    assert 0 < speed["latency_p50_s"] <= speed["latency_p95_s"] <= speed["latency_max_s"]
    assert speed["items_per_s"] > 0 and speed["generated_tokens"] > 0
    assert _gate(record, "toy/decode_tokens_per_s>=10")["passed"] is True
    assert _gate(record, "toy/latency_p95_s<=1e-06")["passed"] is False
    result.stdout.fnmatch_lines(
        ["speed (model calls answered in this run*", "suite*items/s*p95 s*"]
    )
    assert "p95 s" in (toy.path / "s.md").read_text()
    assert 'name="toy/latency_p95_s"' in (toy.path / "j.xml").read_text()
    again, record = run(toy, mode, "--gate", "toy/latency_p95_s<=1")
    assert again.ret == 1, "a fully cached run measured no speed: its gate cannot pass"
    assert record["speed"]["toy"]["cached_share"] == 1.0
    assert record["speed"]["toy"]["latency_p95_s"] is None


def test_a_slowdown_beyond_max_slowdown_fails_the_baseline_check(toy):
    _, base = run(toy, [], "--no-cache")
    for item in base["items"]:  # the baseline answered twice as fast
        for call in item["calls"]:
            call["latency_s"] /= 2
            call["prefill_s"] /= 2
    (toy.path / "base.json").write_text(json.dumps(base))
    args = ("--no-cache", "--baseline", "base.json")
    result, record = run(toy, [], *args, "--max-slowdown", "0.5")
    assert result.ret == 1
    change = next(c for c in record["baseline"]["speed"] if c["metric"] == "toy/latency_p95_s")
    assert change["slowdown"] == pytest.approx(1.0) and change["failed"] is True
    result.stdout.fnmatch_lines(
        ["speed toy/latency_p95_s: p95 * vs * s, 2.00x slower than the baseline*SPEED CHECK FAILED"]
    )
    result, record = run(toy, [], *args, "--max-slowdown", "1.5")
    assert result.ret == 0 and not any(c["failed"] for c in record["baseline"]["speed"])
    result, _ = run(toy, [], "--max-slowdown", "0.5")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--max-slowdown 0.5: needs --baseline*"])


@pytest.mark.parametrize("mode", MODES)
def test_benchmark_json_holds_the_speed_and_pytest_benchmark_compares_two_runs(toy, mode):
    run(toy, mode, "--no-cache", "--benchmark-json", "b1.json")
    run(toy, mode, "--no-cache", "--benchmark-json", "b2.json")
    data = json.loads((toy.path / "b1.json").read_text())
    [bench] = data["benchmarks"]
    assert bench["name"] == "extractbench[toy]" and bench["stats"]["rounds"] == 24
    assert bench["extra_info"]["decode_tokens_per_s"] == pytest.approx(DECODE_TOKENS_PER_S)
    compare = subprocess.run(
        [sys.executable, "-m", "pytest_benchmark", "compare", "b1.json", "b2.json"],
        cwd=toy.path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert compare.returncode == 0, compare.stderr
    assert "extractbench[toy]" in compare.stdout


def test_speed_of_logged_calls():
    calls = [
        {"prompt_tokens": 100, "completion_tokens": 10, "latency_s": 1.0, "prefill_s": 0.5,
         "reused_prompt_tokens": 50},
        {"prompt_tokens": 100, "completion_tokens": 10, "latency_s": 9.0, "cached": True},
    ]  # fmt: skip
    [(suite, stats)] = speed_stats([{"suite": "s", "calls": calls}]).items()
    assert suite == "s" and stats.prefill_tokens_per_s == 100 and stats.decode_tokens_per_s == 20
    assert stats.latency_max_s == 1.0 and stats.cached_share == 0.5 and stats.items_per_s == 1.0
    # the prefix-cache hit rate over the calls answered in this run that report reuse
    assert stats.reused_prompt_tokens == 50 and stats.prefix_reuse_share == 0.5
    unreported = speed_stats([{"suite": "s", "calls": [{"prompt_tokens": 100, "latency_s": 1.0}]}])
    assert unreported["s"].reused_prompt_tokens is None
    assert unreported["s"].prefix_reuse_share is None
    slower = speed_stats([{"suite": "s", "calls": [{**calls[0], "latency_s": 1.5}]}])
    [change] = [
        c for c in speed_changes(slower, {"s": stats}, 0.4) if c.metric == "s/latency_max_s"
    ]
    assert change.slowdown == pytest.approx(0.5) and change.failed
    assert change_text(change) == "max 1.5 vs 1 s, 1.50x slower"


def test_a_speed_change_reads_as_the_two_rates_and_their_factor():
    """A rate that grew 54 times reads "54x faster", not "98.2% faster"."""

    def text(metric, current, base):
        return change_text({"metric": f"fda/{metric}", "current": current, "baseline": base})

    assert text("items_per_s", 14.64, 0.27) == "14.6 vs 0.27 items/s, 54x faster"
    assert text("items_per_s", 0.27, 14.64) == "0.27 vs 14.6 items/s, 54x slower"
    assert text("decode_tokens_per_s", 30.0, 40.0) == "30 vs 40 tokens/s, 1.33x slower"
    assert text("latency_p50_s", 0.5, 1.0) == "p50 0.5 vs 1 s, 2.00x faster"
    assert text("latency_p95_s", 1.0, 1.0) == "p95 1 vs 1 s, the same"
    assert text("items_per_s", None, 1.0) == "-"
