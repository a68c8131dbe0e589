"""A project that depends on extractbench runs the suites from its own folder:
``pytest --pyargs extractbench.suites.fda`` selects the suite by its package name and applies
that folder's ``pyproject.toml`` (gates, limits) and writes its reports there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
pytestmark = pytest.mark.skipif(not (DATA / "fda").is_dir(), reason="../shared/data not present")

MODES = {"serial": (), "xdist": ("-n", "2")}


def _project(pytester: pytest.Pytester, gate: str = ">= 0.01") -> None:
    pytester.makefile(
        ".toml",
        pyproject=f"""
        [project]
        name = "my-release"
        version = "1.0"

        [tool.extractbench.gates]
        "fda/accuracy" = "{gate}"

        [tool.extractbench.limits]
        fda = 3
        """,
    )


@pytest.mark.parametrize("mode", MODES)
def test_pyargs_runs_the_suite_under_the_project_s_own_settings(pytester, mode):
    _project(pytester)
    result = pytester.runpytest_subprocess(
        "--pyargs", "extractbench.suites.fda", "--backend", "fake", f"--data-dir={DATA}",
        *MODES[mode],
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    (record_path,) = (pytester.path / "reports").glob("*.json")
    record = json.loads(record_path.read_text())
    assert len(record["items"]) == 3  # the project's limit, not the suite's 1,607 items
    (gate,) = record["gates"]
    assert gate["expression"] == "fda/accuracy>=0.01" and gate["passed"] is True
    assert str(pytester.path / "pyproject.toml") in gate["source"]


def test_a_project_gate_on_an_unknown_metric_is_a_usage_error(pytester):
    _project(pytester)
    (pytester.path / "pyproject.toml").write_text(
        (pytester.path / "pyproject.toml").read_text().replace("fda/accuracy", "fda/acuracy")
    )
    result = pytester.runpytest_subprocess(
        "--pyargs", "extractbench.suites.fda", "--backend", "fake", f"--data-dir={DATA}"
    )
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*gate fda/acuracy>=0.01*no metric 'acuracy'*"])
    assert not (pytester.path / "reports").exists()


def test_a_data_dir_that_moves_pytest_s_rootdir_is_named_not_ungated(pytester):
    """``--data-dir DIR`` (a space, not '='): pytest takes DIR as a place for its rootdir and
    config, so the project's gates would not apply: the run refuses and says why."""
    _project(pytester)
    result = pytester.runpytest_subprocess(
        "--pyargs", "extractbench.suites.fda", "--backend", "fake", "--data-dir", str(DATA),
        "-k", "x" * 300,  # an argument too long to be a file name is no path, not a traceback
    )  # fmt: skip
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*declares gates*write path options with '='*--data-dir=DIR*"])
    assert "Traceback" not in result.stderr.str()
    assert not (DATA / "reports").exists()


def test_an_items_file_the_project_names_outside_its_folder_is_one_usage_line(pytester):
    """``[tool.extractbench.options.kv] path = "../x.jsonl"``: the items file would be read
    from outside the project while its documents must stay inside: refused before any item,
    blamed on the table, unless ``kv.root`` names the wider folder."""
    outside = pytester.path.parent / f"{pytester.path.name}-x.jsonl"
    outside.write_text('{"id": "a", "document": "Name: Ann", "fields": {"name": "Ann"}}\n')
    pytester.makefile(
        ".toml", pyproject=f'[tool.extractbench.options.kv]\npath = "../{outside.name}"\n'
    )
    result = pytester.runpytest_subprocess(
        "--pyargs", "extractbench.suites.kv", "--backend", "fake", "-p", "no:cacheprovider"
    )
    assert result.ret == 4, result.stdout.str()[-2000:]
    result.stderr.fnmatch_lines(
        [f"*pyproject.toml [[]tool.extractbench.options.kv[]]: path = '../{outside.name}' is "
         f"outside the project folder {pytester.path} (it resolves to {outside}); keep the "
         "file in the project, or name a wider folder with kv.root*"]
    )  # fmt: skip
    assert "collected" not in result.stdout.str() or "0 items" in result.stdout.str()
