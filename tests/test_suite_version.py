"""A suite's version: declared in its definition, written in the run record per suite, and
checked by ``--baseline`` and ``extractbench compare``, which refuse (one line, exit 4) a
baseline scored at another version or with none recorded, unless
``--allow-incomparable-baseline``; black-box on the toy suite with the fake model."""

from __future__ import annotations

import json

import pytest

from extractbench.plugins.cli.main import main as cli_main
from extractbench.suites.registry import Registry
from tests.conftest import TOY_SUITE, read_json

COMMON = ("--backend", "fake", "--data-dir", "data", "-p", "no:cacheprovider", "--no-step-summary")


def _run(toy: pytest.Pytester, *args: str) -> tuple[int, str]:
    result = toy.runpytest_inprocess(*COMMON, *args)
    return result.ret, result.stdout.str() + result.stderr.str()


def _bump(toy: pytest.Pytester) -> None:
    """The toy suite's definition raised to version 2 (it declares none: 1)."""
    toy.makepyfile(toy_suite=TOY_SUITE.replace("prefetch=True,", "prefetch=True, version=2,"))


def _unversioned(source, dest) -> None:  # noqa: ANN001 - paths
    """A copy of a record as one written before suites declared versions."""
    record = json.loads(source.read_text())
    for info in record["suites"].values():
        del info["version"]
    dest.write_text(json.dumps(record))


def test_every_installed_suite_declares_an_integer_version():
    suites = Registry.installed().suites
    assert suites and all(type(s.version) is int and s.version >= 1 for s in suites.values())


def test_a_baseline_of_another_suite_version_is_refused_in_one_line(toy):
    ret, out = _run(toy, "--report-json", "base.json")
    assert ret == 0, out[-2000:]
    assert read_json(toy.path / "base.json")["suites"]["toy"]["version"] == 1
    ret, out = _run(toy, "--baseline", "base.json")
    assert ret == 0, out[-2000:]  # the same version: compared

    _bump(toy)
    ret, out = _run(toy, "--baseline", "base.json", "--report-json", "v2.json")
    assert ret == 4, out[-2000:]
    lines = [line for line in out.splitlines() if "--baseline base.json" in line]
    assert len(lines) == 1 and "toy: suite version 1 in the baseline, 2 in this run" in lines[0]
    assert "--allow-incomparable-baseline" in lines[0]
    assert not (toy.path / "v2.json").exists()  # refused before the first model call
    ret, out = _run(
        toy, "--baseline", "base.json", "--allow-incomparable-baseline", "--report-json", "v2.json"
    )
    assert ret == 0, out[-2000:]
    assert read_json(toy.path / "v2.json")["suites"]["toy"]["version"] == 2


def test_a_baseline_without_suite_versions_is_refused_unless_allowed(toy):
    ret, out = _run(toy, "--report-json", "base.json")
    assert ret == 0, out[-2000:]
    _unversioned(toy.path / "base.json", toy.path / "old.json")
    ret, out = _run(toy, "--baseline", "old.json")
    assert ret == 4, out[-2000:]
    assert "toy: no suite version in the baseline (a record older than suite versions)" in out
    ret, out = _run(toy, "--baseline", "old.json", "--allow-incomparable-baseline")
    assert ret == 0, out[-2000:]


def test_compare_refuses_records_of_different_suite_versions(toy, capsys):
    ret, out = _run(toy, "--report-json", "v1.json")
    assert ret == 0, out[-2000:]
    _bump(toy)
    ret, out = _run(toy, "--report-json", "v2.json")
    assert ret == 0, out[-2000:]
    _unversioned(toy.path / "v1.json", toy.path / "old.json")
    v1, v2, old = (str(toy.path / n) for n in ("v1.json", "v2.json", "old.json"))
    capsys.readouterr()

    assert cli_main(["compare", v1, v1]) == 0
    assert cli_main(["compare", v1, v2]) == 4
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "toy: suite version 1 in the baseline, 2 in the new record" in err[0]
    assert cli_main(["compare", old, v1]) == 4
    assert "toy: no suite version in the baseline" in capsys.readouterr().err
    assert cli_main(["compare", v1, old]) == 4
    assert "toy: no suite version in the new record" in capsys.readouterr().err
    assert cli_main(["compare", v1, v2, "--allow-incomparable-baseline"]) == 0
    assert "toy/accuracy" in capsys.readouterr().out
