"""A team's suites only: ``[tool.extractbench] suites = ["kv"]`` decides what a command over
the whole suites package (``pytest --pyargs extractbench.suites``) runs; a suite named by its
own package still runs; a gate the listed suites cannot answer is one line, exit 4, before
any model call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import PROJECT_ADDOPTS

MODES = {"serial": (), "xdist": ("-n", "2")}
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _team(pytester: pytest.Pytester, table: str = 'suites = ["kv"]', gates: str = "") -> None:
    rows = [
        {
            "document": f"Invoice {i}\ntotal: {100 + i}.50\n",
            "key": "total",
            "value": f"{100 + i}.50",
        }
        for i in range(6)
    ]
    (pytester.path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pytester.makefile(
        ".toml",
        pyproject=f"""
        [tool.pytest.ini_options]
        addopts = "{PROJECT_ADDOPTS}"

        [tool.extractbench]
        {table}

        [tool.extractbench.options.kv]
        path = "items.jsonl"

        [tool.extractbench.gates]
        "kv/accuracy:ci_low" = ">= 0.1"
        {gates}
        """,
    )


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("--backend", "fake", "--pyargs", *args)


@pytest.mark.parametrize("mode", MODES)
def test_the_whole_package_runs_only_the_listed_suites(pytester, mode):
    """No data folder is given: a public suite the project left out would be a missing-data
    usage error (exit 4) if it were selected."""
    _team(pytester)
    result = _run(pytester, "extractbench.suites", *MODES[mode])
    assert result.ret == 0, result.stdout.str()[-2000:] + result.stderr.str()[-2000:]
    (path,) = (pytester.path / "reports").glob("*.json")
    record = json.loads(path.read_text())
    assert {it["suite"] for it in record["items"]} == {"kv"} and len(record["items"]) == 6
    assert record["selection"]["narrow"] is False  # the whole package: every gate must hold
    assert [g["passed"] for g in record["gates"]] == [True]


def test_a_gate_on_a_suite_left_out_is_one_line_and_exit_4(pytester):
    _team(pytester, gates='"fda/accuracy" = ">= 0.2"')
    result = _run(pytester, "extractbench.suites")
    assert result.ret == 4
    text = result.stderr.str()
    assert "gate fda/accuracy>=0.2" in text
    assert "suite fda is not in [tool.extractbench] suites (kv)" in text
    assert "pytest --pyargs extractbench.suites.fda" in text
    assert "Traceback" not in text and not list(pytester.path.glob("reports/*.json"))


@pytest.mark.parametrize(
    "table, message",
    [
        ('suites = ["kvv"]', "suites: unknown suite 'kvv' (did you mean 'kv'?)"),
        ("suites = []", "suites = []: must be a non-empty list of suite names"),
        ('suites = "kv"', "suites = 'kv': must be a non-empty list of suite names"),
    ],
    ids=["typo", "empty", "not a list"],
)
def test_a_bad_suites_list_is_one_line_and_exit_4(pytester, table, message):
    _team(pytester, table=table)
    result = _run(pytester, "extractbench.suites")
    assert result.ret == 4
    assert message in result.stderr.str(), result.stderr.str()[-2000:]
    assert not list(pytester.path.glob("reports/*.json"))


@pytest.mark.skipif(not (DATA / "fda").is_dir(), reason="../shared/data not present")
def test_a_suite_named_by_its_package_runs_although_not_listed(pytester):
    """A job of the same project runs a public suite by naming it, under a gate of its own
    (``--allow-subset``: the team's own gates are the per-push job's)."""
    _team(pytester)
    result = _run(
        pytester, "extractbench.suites.fda", f"--data-dir={DATA}", "--limit", "3",
        "--gate", "fda/accuracy>=0.0", "--allow-subset",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    (path,) = (pytester.path / "reports").glob("*.json")
    record = json.loads(path.read_text())
    assert {it["suite"] for it in record["items"]} == {"fda"}


def test_extractbench_suites_says_which_suites_the_project_runs(tmp_path, monkeypatch, capsys):
    from extractbench.plugins.cli.main import main

    (tmp_path / "pyproject.toml").write_text('[tool.extractbench]\nsuites = ["kv"]\n')
    monkeypatch.chdir(tmp_path)
    assert main(["suites", "kv", "--data-dir", str(tmp_path)]) == 0
    assert "(this project's suites: kv, as [tool.extractbench] suites lists them)" in (
        capsys.readouterr().out
    )
    (tmp_path / "pyproject.toml").write_text('[tool.extractbench]\nsuites = ["kv", 3]\n')
    assert main(["suites", "kv", "--data-dir", str(tmp_path)]) == 4
    assert "suites.1 = 3: must be a suite name" in capsys.readouterr().err
