"""Fail closed, round 2 (plugin side): gates come from the config pytest loaded, a
subset of a gated suite decides nothing, unwritable JUnit and HTML are output errors, and a
score outside its metric's range fails its item; black-box, with and without -n 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import PROJECT_ADDOPTS, TOY_SUITE
from tests.test_early_stop import run as run_early
from tests.test_early_stop import toy100  # noqa: F401, F811 - the fixture, shared
from tests.test_plugin import MODES, run

GATED = f"[tool.pytest.ini_options]\naddopts = '{PROJECT_ADDOPTS}'\n[tool.extractbench.gates]\n'toy/accuracy' = '>= 0.9'\n"


@pytest.mark.parametrize("mode", MODES)
def test_gates_come_from_the_config_pytest_loaded_whatever_the_rootdir(toy, mode):
    """--rootdir elsewhere keeps the project's gates (dropping them would exit 0 at any
    accuracy)."""
    toy.makepyprojecttoml(GATED)
    elsewhere = toy.mkdir("elsewhere")
    result, record = run(toy, mode, "--rootdir", str(elsewhere))
    assert result.ret == 1, result.stdout.str()[-2000:]
    [gate] = record["gates"]
    assert gate["passed"] is False and gate["source"].endswith("pyproject.toml")
    assert any("pyproject.toml: 1 gates" in line for line in record["settings"]["gates_from"])


def test_another_config_file_is_named_and_the_projects_gates_are_warned_about(toy):
    """-c other.ini --ignore-project-gates: the gates of other.ini apply (ini option
    extractbench_gates); the project's pyproject.toml gates do not, and the summary and
    record say so (without the flag: exit 4, tests/test_fail_closed_paths.py)."""
    toy.makepyprojecttoml(GATED)
    (toy.path / "other.ini").write_text(
        f"[pytest]\naddopts = {PROJECT_ADDOPTS}\nextractbench_gates =\n    toy/length>=0.1\n"
    )
    result, record = run(
        toy, [], "-c", "other.ini", "--rootdir", str(toy.path), "--ignore-project-gates"
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert [g["expression"] for g in record["gates"]] == ["toy/length>=0.1"]
    assert record["gates"][0]["source"].endswith("other.ini extractbench_gates")
    [warning] = record["warnings"]
    assert "pyproject.toml declares gates (toy/accuracy>=0.9)" in warning
    result.stdout.fnmatch_lines(["warning: *pyproject.toml declares gates*-c *pyproject.toml*"])


@pytest.mark.parametrize("mode", MODES)
def test_a_gates_file_adds_its_gates(toy, mode):
    (toy.path / "release-gates.toml").write_text("[gates]\n'toy/accuracy' = '>= 0.9'\n")
    result, record = run(
        toy, mode, "--gates-file", "release-gates.toml", "--gate", "toy/length>=0.1"
    )
    assert result.ret == 1
    sources = {g["expression"]: g["source"] for g in record["gates"]}
    assert sources["toy/accuracy>=0.9"].endswith("release-gates.toml")
    assert sources["toy/length>=0.1"] == "--gate"
    result, _ = run(toy, mode, "--gates-file", "missing.toml")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--gates-file missing.toml: no such file*"])
    result, _ = run(toy, mode, "--gates-file", "data")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["ERROR: --gates-file data: is a folder, not a file; give a TOML file with *"]
    )


@pytest.mark.parametrize("mode", MODES)
def test_dropping_all_of_a_gated_suite_with_k_decides_nothing(toy, mode):
    """-k that leaves out every item of a gated suite is a subset too (INCOMPLETE), and a
    subset of a suite no gate names decides normally."""
    result, record = run(toy, mode, "-k", "d1/", "--gate", "toy/accuracy>=0.1")
    assert result.ret == 1 and record["verdict"]["word"] == "INCOMPLETE"
    assert record["selection"]["deselected"] == {"toy": 20}
    result, record = run(toy, mode, "-k", "d1/")
    assert result.ret == 0 and record["verdict"]["word"] == "PASS"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("option", ["--junitxml", "--html"])
def test_an_unwritable_junit_or_html_is_an_output_error_the_record_names(toy, mode, option):
    # a full device takes the path check (a device stays a device) and fails the write; an
    # output under a regular file is refused before any item (exit 4), not here
    result, record = run(toy, mode, option, "/dev/full")
    assert result.ret == 6, result.stdout.str()[-2000:]
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    [lost] = record["output_errors"]
    assert lost.startswith(f"{option} /dev/full: not written"), lost
    result.stdout.fnmatch_lines(
        [f"NOT WRITTEN: {option} *", "extractbench verdict: FAIL (exit 6)*"]
    )


@pytest.mark.parametrize("mode", MODES)
def test_junit_and_html_of_a_benchmark_run_are_written_from_the_record(toy, mode):
    result, record = run(
        toy, mode, "--junitxml", "j.xml", "--html", "page.html", "--gate", "toy/accuracy>=0.9"
    )
    assert result.ret == 1
    junit = (toy.path / "j.xml").read_text()
    assert 'name="extractbench.verdict" value="FAIL"' in junit
    assert junit.count("<testcase") == 24 + 1  # the items and the gate
    assert '<testcase classname="gate" name="toy/accuracy"' in junit
    page = (toy.path / "page.html").read_text()
    assert "extractbench: FAIL (exit 1)" in page and page.count("<code>toy/d") == 24
    result.stdout.fnmatch_lines(["*1 failed, 24 passed*"])  # the gate, counted by pytest


OUT_OF_RANGE = TOY_SUITE.replace(
    '"length": min(1.0, len(generation.text) / 20)', '"length": len(generation.text) / 5'
)


@pytest.mark.parametrize("mode", MODES)
def test_a_score_outside_its_declared_range_fails_its_item(toy, mode):
    toy.makepyfile(toy_suite=OUT_OF_RANGE)
    result, record = run(toy, mode, "--gate", "toy/accuracy>=0.1")
    assert result.ret == 1
    failed = [it for it in record["items"] if it["outcome"] == "failed"]
    assert failed and all("outside its declared range [0, 1]" in it["error"] for it in failed)
    assert "toy/length" in failed[0]["error"] and record["gates"][0]["passed"] is None
    assert record["verdict"]["word"] == "FAIL"


@pytest.mark.parametrize("mode", MODES)
def test_m_and_lf_selections_of_a_gated_suite_decide_nothing(toy, mode):
    """-m that leaves out every item, and --lf after a run with failing items, select a
    subset of the gated suite: its gate is not decided and the run is INCOMPLETE."""
    result, record = run(toy, mode, "-m", "not xdist_group", "--gate", "toy/accuracy>=0.1")
    assert result.ret == 1 and record["verdict"]["word"] == "INCOMPLETE"
    assert record["selection"]["deselected"] == {"toy": 24}
    toy.makepyfile(toy_suite=OUT_OF_RANGE)  # some items fail: --lf reruns only those
    first = toy.runpytest_subprocess("--backend", "fake", "--data-dir", "data", "--no-cache", *mode)
    assert first.ret == 1
    result, record = run(toy, mode, "--lf", "--no-cache", "--gate", "toy/accuracy>=0.1")
    assert result.ret == 1 and record["verdict"]["word"] == "INCOMPLETE", result.stdout.str()[
        -1500:
    ]
    assert 0 < record["counts"]["items"] < 24 and record["selection"]["deselected"]["toy"] > 0
    assert record["gates"][0]["passed"] is None and "--allow-subset" in record["gates"][0]["reason"]


CONFIG_TYPOS = {
    "[tool.extractbench.gatez]\n'toy/accuracy' = '>= 0.9'\n": (
        "*pyproject.toml [[]tool.extractbench[]]: unknown key 'gatez' (did you mean 'gates'?); "
        "known keys: gates, limits, options, stop_when_decided, suites"
    ),
    "[tool.extractbench]\ngates = 'toy/accuracy>=0.5'\n": (
        "*[[]tool.extractbench[]]: gates = 'toy/accuracy>=0.5': must be a table of gates*"
    ),
    "[tool.extractbench]\nlimits = 5\n": "*limits = 5: must be a table of default item caps*",
    "[tool.extractbench]\noptions = 'x'\n": "*options = 'x': must be a table of suite tables*",
    "[tool.extractbench.gates]\n'toy/accuracy' = 0.5\n": (
        "*gates.toy/accuracy = 0.5: must be a string such as '>= 0.25'"
    ),
    "[tool.extractbench.limits]\ntoyy = 4\n": (
        "*[[]tool.extractbench.limits[]] toyy: unknown suite 'toyy' (did you mean 'toy'?)*"
    ),
    "[tool.extractbench.options.toy]\ndelai = 0.1\n": (
        "ERROR: *pyproject.toml [[]tool.extractbench.options.toy[]]: unknown toy option(s) "
        "delai (did you mean 'delay'?); known: *"
    ),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("table", list(CONFIG_TYPOS), ids=range(len(CONFIG_TYPOS)))
def test_a_typo_in_the_projects_config_is_one_usage_line(toy, mode, table):
    """An unknown key or a value of the wrong type stops the run before any item (exit 4),
    instead of dropping a gate without a word or an INTERNALERROR traceback."""
    toy.makepyprojecttoml(f"[tool.pytest.ini_options]\naddopts = '{PROJECT_ADDOPTS}'\n{table}")
    result, record = run(toy, mode)
    assert result.ret == 4, result.stdout.str()[-2000:]
    result.stderr.fnmatch_lines([CONFIG_TYPOS[table]])
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text and "Traceback" not in text and not record


def test_a_gates_file_is_read_by_the_same_model(toy):
    (toy.path / "release.toml").write_text(
        "[tool.extractbench]\ngate = {'toy/accuracy' = '>= 0.9'}\n"
    )
    result, _ = run(toy, [], "--gates-file", "release.toml")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["*release.toml [[]tool.extractbench[]]: unknown key 'gate' (did you mean 'gates'?)*"]
    )
    (toy.path / "release.toml").write_text("[gates]\n'toy/accuracy' = 0.9\n")
    result, _ = run(toy, [], "--gates-file", "release.toml")
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        ["*release.toml (top level): gates.toy/accuracy = 0.9: must be a string*"]
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_minimum_n_met_before_an_early_stop_passes_and_never_sits_open_in_a_pass(
    toy100, mode  # noqa: F811
):
    """``--stop-when-decided`` with a minimum n: the items that ran meet it, so it passed
    (never "not evaluated" in a PASS run, nor a skipped JUnit case)."""
    import xml.etree.ElementTree as ET

    junit = toy100.path / "junit.xml"
    result, record = run_early(
        toy100, "--stop-when-decided", "--gate", "toy/accuracy>=0.2", "--gate", "toy:n>=10",
        f"--junitxml={junit}", *mode,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert record["counts"]["not_run"] > 0 and record["verdict"]["word"] == "PASS"
    n_gate = next(g for g in record["gates"] if g["stat"] == "n")
    assert n_gate["passed"] is True and n_gate["n"] >= 10, n_gate
    assert all(g["passed"] is True for g in record["gates"])
    [case] = [c for c in ET.parse(junit).getroot().iter("testcase")
              if c.get("classname") == "gate" and c.get("name") == "toy"]  # fmt: skip
    assert case.find("skipped") is None and case.find("failure") is None


def test_a_pass_never_holds_a_gate_left_open():
    """The one verdict: a complete run with a gate not evaluated for a reason no other
    rule names is INCOMPLETE (exit 1), never PASS."""
    from extractbench.plugins.record import SCHEMA_VERSION, Selection, parse_record
    from extractbench.plugins.verdict.gates import parse_gate
    from extractbench.plugins.verdict.status import exit_status

    record = parse_record({"schema_version": SCHEMA_VERSION, "run_id": "t",
                           "counts": {"items": 3, "expected": 3, "scored": 3}})  # fmt: skip
    gate = parse_gate("toy/accuracy>=0.1").entry(0.5, True, "0.5 >= 0.1")
    assert exit_status(record, Selection(suites=["toy"]), True, [], [gate], None)[:2] == (0, "PASS")
    gate = gate.model_copy(update={"passed": None, "reason": "not evaluated: for a reason"})
    status, word, reasons = exit_status(record, Selection(suites=["toy"]), True, [], [gate], None)
    assert (status, word) == (1, "INCOMPLETE")
    assert reasons == ["gate toy/accuracy>=0.1 not evaluated: for a reason"]


@pytest.mark.slow
def test_a_partial_record_as_the_baseline_of_a_regression_test_is_refused(toy100):  # noqa: F811
    """A record stopped early, or one shard, given to --baseline with --max-regression:
    one usage line before any item (pytest, ``extractbench report`` and ``merge``), unless
    --allow-partial-baseline; without --max-regression it is only compared."""
    early, record = run_early(
        toy100, "--stop-when-decided", "--gate", "toy/accuracy>=0.2", name="early.json"
    )
    assert early.ret == 0 and record["counts"]["not_run"] > 0
    ran, total = record["counts"]["items"], record["counts"]["expected"]
    result, again = run_early(toy100, "--baseline", "early.json", "--max-regression", "0.05",
                              name="again.json")  # fmt: skip
    assert result.ret == 4 and not again, result.stdout.str()[-2000:]
    result.stderr.fnmatch_lines(
        [f"ERROR: --baseline early.json: the record is stopped early (--stop-when-decided): "
         f"{ran} of {total} selected items ran; a regression test against it covers only "
         "those items. Give the record of a complete run (or the merge of every shard), or "
         "pass --allow-partial-baseline"]
    )  # fmt: skip
    assert "test_toy.py" not in result.stdout.str()
    shard, _ = run_early(toy100, "--shard", "1/2", name="shard.json")
    assert shard.ret == 0
    result, _ = run_early(toy100, "--baseline", "shard.json", "--max-regression", "0.05",
                          name="again.json")  # fmt: skip
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--baseline shard.json: the record is one shard (1/2) of a run*"])
    run_early(toy100, "--shard", "2/2", name="shard2.json")
    for command in ("report", "merge"):
        args = ["shard.json", "shard2.json", "-o", "merged.json"] if command == "merge" else [
            "shard.json"
        ]
        cli = subprocess.run(
            [sys.executable, "-m", "extractbench.plugins.cli.main", command, *args,
             "--baseline", "early.json", "--max-regression", "0.05"],
            cwd=toy100.path, capture_output=True, text=True,
        )  # fmt: skip
        assert cli.returncode == 4, cli.stdout + cli.stderr
        assert f"extractbench {command}: --baseline early.json: the record is stopped" in cli.stderr
    allowed, _ = run_early(toy100, "--baseline", "early.json", "--max-regression", "0.05",
                           "--allow-partial-baseline", name="again.json")  # fmt: skip
    assert allowed.ret in (0, 1) and "not_run" not in allowed.stderr.str()
    compared, _ = run_early(toy100, "--baseline", "early.json", name="again.json")
    assert compared.ret == 0, compared.stdout.str()[-2000:]
