"""Declared gates are the release contract: a command that selects the whole suites package
runs every suite the project configures (a gate on it, or its options given), those run
on request included, and a declared gate it leaves unevaluated (a skipped suite, a suite
outside the command's paths) makes the run INCOMPLETE; only a command that names suites
one by one may leave a gated suite out, and then the terminal, the record and JUnit say
"not selected by this command". Black-box, with and without -n 2; the real registry's
selection of ``kv`` without pytest."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from extractbench import suites as suites_package
from extractbench.suites.registry import Registry
from tests.conftest import PROJECT_ADDOPTS, TOY_SUITE, read_json, toy_rows
from tests.test_plugin import MODES

# two suites under suites/: "toy", and "toyreq" run on request (as kv is)
LAYOUT_SUITE = TOY_SUITE.replace(
    '"toy", Path(__file__).parent, "test_toy.py::test_toy"',
    '"toy", Path(__file__).parent / "suites" / "toy", "test_toy.py::test_toy"',
)
ON_REQUEST = (
    LAYOUT_SUITE.replace('f"toy/{row', 'f"toyreq/{row')
    .replace('"toy", Path(__file__).parent / "suites" / "toy", "test_toy.py::test_toy"',
             '"toyreq", Path(__file__).parent / "suites" / "toyreq", "test_toyreq.py::test_toyreq"')
    .replace("prefetch=True,", "prefetch=True, on_request=True,")
)  # fmt: skip
CONFTEST = """
def pytest_extractbench_suites():
    from toy_suite import SUITE
    from toyreq_suite import SUITE as REQ

    return [SUITE, REQ]
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """A project with its suites under suites/ (the layout of extractbench's own)."""
    assert ON_REQUEST != LAYOUT_SUITE != TOY_SUITE
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(toy_suite=LAYOUT_SUITE, toyreq_suite=ON_REQUEST)
    for name in ("toy", "toyreq"):
        folder = pytester.path / "suites" / name
        folder.mkdir(parents=True)
        (folder / f"test_{name}.py").write_text(
            f"from extractbench.plugins.run.suite_test import suite_test\n\ntest_{name} = suite_test({name!r})\n"
        )
    data = pytester.mkdir("data")
    (data / "toy.jsonl").write_text("\n".join(json.dumps(r) for r in toy_rows(2)) + "\n")
    return pytester


def _pyproject(project: pytest.Pytester, gates: str) -> None:
    project.makepyprojecttoml(
        f"[tool.pytest.ini_options]\naddopts = '{PROJECT_ADDOPTS}'\n"
        f"[tool.extractbench.gates]\n{gates}\n"
    )


def _run(project: pytest.Pytester, *args: str) -> tuple[pytest.RunResult, dict]:
    record = project.path / "record.json"
    record.unlink(missing_ok=True)
    result = project.runpytest_subprocess(
        "--backend", "fake", "--data-dir=data", f"--report-json={record}",
        f"--junitxml={project.path / 'junit.xml'}", *args,
    )  # fmt: skip
    return result, (read_json(record) if record.exists() else {})


def _gate_case(project: pytest.Pytester, metric: str) -> ET.Element:
    root = ET.parse(project.path / "junit.xml").getroot()
    [case] = [
        c for c in root.iter("testcase") if c.get("classname") == "gate" and c.get("name") == metric
    ]
    return case


@pytest.mark.parametrize("mode", MODES)
def test_the_whole_package_runs_a_gated_suite_that_runs_on_request(project, mode):
    _pyproject(project, "'toyreq/accuracy' = '>= 0.99'")
    result, record = _run(project, "suites/", *mode)
    assert record["selection"]["suites"] == ["toy", "toyreq"]
    assert record["counts"]["scored"] == 16  # 8 items each
    [gate] = record["gates"]
    assert gate["passed"] is False and gate["n"] == 8  # evaluated: the fake model misses some
    assert result.ret == 1 and record["verdict"]["word"] == "FAIL"
    assert record["selection"]["narrow"] is False


@pytest.mark.parametrize("mode", MODES)
def test_the_whole_package_leaves_an_unconfigured_on_request_suite_out(project, mode):
    _pyproject(project, "'toy/accuracy' = '>= 0.1'")
    result, record = _run(project, "suites/", *mode)
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert record["selection"]["suites"] == ["toy"] and record["counts"]["scored"] == 8


@pytest.mark.parametrize("mode", MODES)
def test_a_command_narrower_than_the_declared_gates_is_incomplete(project, mode):
    """A CI command narrowed to one suite never turns green without the team's gate on
    another: INCOMPLETE (exit 1), naming the gate and both ways out."""
    _pyproject(project, "'toy/accuracy' = '>= 0.1'\n'toyreq/accuracy' = '>= 0.99'")
    result, record = _run(project, "suites/toy", *mode)
    assert result.ret == 1 and record["verdict"]["word"] == "INCOMPLETE", result.stdout.str()[
        -2000:
    ]
    [reason] = [r for r in record["verdict"]["reasons"] if "toyreq" in r]
    assert "not selected by this command" in reason and "--allow-subset" in reason
    failure = _gate_case(project, "toyreq/accuracy").find("failure")
    assert failure is not None and "not selected by this command" in failure.get("message")
    assert _gate_case(project, "toy/accuracy").find("failure") is None


@pytest.mark.parametrize("mode", MODES)
def test_naming_one_suite_with_allow_subset_leaves_a_gated_one_out_and_says_so(project, mode):
    _pyproject(project, "'toy/accuracy' = '>= 0.1'\n'toyreq/accuracy' = '>= 0.99'")
    result, record = _run(project, "suites/toy", "--allow-subset", *mode)
    assert result.ret == 0, result.stdout.str()[-2000:]
    gate = next(g for g in record["gates"] if g["metric"] == "toyreq/accuracy")
    assert gate["passed"] is None and gate["not_evaluated"] == "not_selected"
    assert "not selected by this command" in gate["reason"]
    assert record["selection"]["narrow"] is True
    result.stdout.fnmatch_lines(
        ["*GATE NOT EVALUATED*toyreq/accuracy*not selected by this command*"]
    )
    skipped = _gate_case(project, "toyreq/accuracy").find("skipped")
    assert skipped is not None and "not selected by this command" in skipped.get("message")
    assert _gate_case(project, "toy/accuracy").find("failure") is None


@pytest.mark.parametrize("mode", MODES)
def test_a_gated_suite_skipped_for_missing_data_makes_the_run_incomplete(project, mode):
    """Another suite measured, the gated one skipped: never a PASS."""
    (project.path / "toyreq_suite.py").write_text(
        ON_REQUEST.replace('path = data_dir / "toy.jsonl"', 'path = data_dir / "absent.jsonl"')
        .replace('data=("toy.jsonl",)', 'data=("absent.jsonl",)')
    )  # fmt: skip
    _pyproject(project, "'toyreq/accuracy' = '>= 0.1'")
    result, record = _run(project, "suites/", "--skip-missing-data", *mode)
    assert result.ret == 1 and record["verdict"]["word"] == "INCOMPLETE", result.stdout.str()[
        -2000:
    ]
    assert record["counts"]["scored"] == 8  # toy ran
    assert any("gate toyreq/accuracy>=0.1 not evaluated" in r for r in record["verdict"]["reasons"])
    failure = _gate_case(project, "toyreq/accuracy").find("failure")
    assert failure is not None and "skipped" in failure.get("message")


def test_a_gated_suite_outside_the_whole_commands_paths_makes_it_incomplete(project):
    """A suite registered elsewhere (another package's folder) is not under `pytest suites/`:
    its declared gate cannot be answered there, so the run is not a PASS."""
    elsewhere = project.mkdir("elsewhere")
    (elsewhere / "test_toyreq.py").write_text(
        (project.path / "suites/toyreq/test_toyreq.py").read_text()
    )
    (project.path / "suites/toyreq/test_toyreq.py").unlink()
    (project.path / "suites/toyreq").rmdir()
    (project.path / "toyreq_suite.py").write_text(
        ON_REQUEST.replace(
            'Path(__file__).parent / "suites" / "toyreq"', 'Path(__file__).parent / "elsewhere"'
        )
    )
    _pyproject(project, "'toyreq/accuracy' = '>= 0.1'")
    result, record = _run(project, "suites/")
    assert result.ret == 1 and record["verdict"]["word"] == "INCOMPLETE", result.stdout.str()[
        -2000:
    ]
    [reason] = [r for r in record["verdict"]["reasons"] if "toyreq" in r]
    assert "not selected by this command" in reason and "add the suite's path" in reason


def test_the_real_registry_selects_kv_from_the_package_only_when_configured():
    registry = Registry.installed()
    package = Path(suites_package.__file__).resolve().parent
    here = Path.cwd()
    names = [s.name for s in registry.selected([str(package)], here)]
    assert "kv" not in names and "fda" in names
    names = [s.name for s in registry.selected([str(package)], here, configured={"kv"})]
    assert "kv" in names
    assert registry.whole([str(package)], here)
    assert not registry.whole([str(package / "fda")], here)
    assert not registry.whole([f"{package / 'fda' / 'test_fda.py'}::test_fda"], here)
    assert [s.name for s in registry.selected([str(package / "kv")], here)] == ["kv"]
