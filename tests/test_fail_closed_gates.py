"""Fail closed, round 2 (plugin side): gates come from the config pytest loaded, a
subset of a gated suite decides nothing, unwritable JUnit and HTML are output errors, and a
score outside its metric's range fails its item; black-box, with and without -n 2."""

from __future__ import annotations

import pytest

from tests.conftest import PROJECT_ADDOPTS, TOY_SUITE
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
    result, record = run(toy, mode, option, "data/toy.jsonl/out.file")
    assert result.ret == 6, result.stdout.str()[-2000:]
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    [lost] = record["output_errors"]
    assert lost.startswith(f"{option} ") and "data/toy.jsonl/out.file: not written" in lost
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
