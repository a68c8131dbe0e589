"""A suite's version and protocol options: declared in its definition, written in the run
record per suite, and checked by ``--baseline`` (pytest, ``extractbench report`` and
``extractbench merge``) and ``extractbench compare``, which refuse (one line, exit 4) a
baseline scored at another version, with none recorded, or with another protocol option,
unless ``--allow-incomparable-baseline``; black-box on the toy suite with the fake model."""

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


def _protocol(toy: pytest.Pytester) -> None:
    """The toy suite's ``delay`` made a protocol option (as ``kv.metric`` is ``kv``'s)."""
    toy.makepyfile(
        toy_suite=TOY_SUITE.replace(
            "class ToyOptions(SuiteOptions):\n",
            "class ToyOptions(SuiteOptions):\n    protocol_fields = ('delay',)\n",
        )
    )


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


def _refused(capsys: pytest.CaptureFixture, command: list[str], *expected: str) -> None:
    """``command`` exits 4 with one line naming each ``expected`` difference, and 0 with
    ``--allow-incomparable-baseline``."""
    capsys.readouterr()
    assert cli_main([*command, "--no-step-summary"]) == 4
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "measured with another protocol" in err[0], err
    assert all(text in err[0] for text in expected), err
    assert "--allow-incomparable-baseline" in err[0]
    assert cli_main([*command, "--no-step-summary", "--allow-incomparable-baseline"]) == 0
    assert "measured with another protocol" not in capsys.readouterr().err


def test_report_and_merge_refuse_a_baseline_of_another_suite_version(toy, capsys):
    ret, out = _run(toy, "--report-json", "v1.json")
    assert ret == 0, out[-2000:]
    _bump(toy)
    for name, shard in (
        ("v2.json", ()),
        ("s1.json", ("--shard", "1/2")),
        ("s2.json", ("--shard", "2/2")),
    ):
        ret, out = _run(toy, "--report-json", name, *shard)
        assert ret == 0, out[-2000:]
    v1, v2, s1, s2, merged = (
        str(toy.path / n) for n in ("v1.json", "v2.json", "s1.json", "s2.json", "m.json")
    )
    capsys.readouterr()
    assert cli_main(["report", v1, "--baseline", v1, "--no-step-summary"]) == 0
    version = "toy: suite version 1 in the baseline, 2 in"
    _refused(capsys, ["report", v2, "--baseline", v1], f"--baseline {v1}", version)
    _refused(capsys, ["merge", s1, s2, "-o", merged, "--baseline", v1], version)
    _unversioned(toy.path / "v2.json", toy.path / "old.json")
    _refused(capsys, ["report", v2, "--baseline", str(toy.path / "old.json")],
             "toy: no suite version in the baseline")  # fmt: skip


def test_every_baseline_check_refuses_another_protocol_option(toy, capsys):
    """A protocol option the suite declares (in a conftest's suite, which ``report`` and
    ``compare`` know only from the records) differs: ``report``, ``merge`` and ``compare``
    refuse as ``--baseline`` does; another value of an option that is not one is compared."""
    _protocol(toy)
    delay = ("--suite-option", "toy.delay=0.001")
    for name, args in (("base.json", ()), ("other.json", ("--suite-option", "toy.delay=0")),
                       ("slow.json", delay), ("s1.json", (*delay, "--shard", "1/2")),
                       ("s2.json", (*delay, "--shard", "2/2"))):  # fmt: skip
        ret, out = _run(toy, "--report-json", name, *args)
        assert ret == 0, out[-2000:]
    base, other, slow, s1, s2 = (
        str(toy.path / n) for n in ("base.json", "other.json", "slow.json", "s1.json", "s2.json")
    )
    capsys.readouterr()
    assert cli_main(["report", other, "--baseline", base, "--no-step-summary"]) == 0
    assert cli_main(["compare", base, other]) == 0
    change = "toy.delay: 0.0 in the baseline, 0.001 in"
    _refused(capsys, ["report", slow, "--baseline", base], change)
    _refused(capsys, ["merge", s1, s2, "-o", str(toy.path / "m.json"), "--baseline", base], change)
    capsys.readouterr()
    assert cli_main(["compare", base, slow]) == 4
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and f"{change} the new record" in err[0], err
    assert cli_main(["compare", base, slow, "--allow-incomparable-baseline"]) == 0
    ret, out = _run(toy, *delay, "--baseline", "base.json")
    assert ret == 4 and f"{change} this run" in out, out[-2000:]


def test_a_record_that_names_no_protocol_options_is_checked_on_every_option(toy, capsys):
    """A record written before records named their suites' protocol options, of a suite this
    installation does not know (a conftest's): which options decide its scores is not
    known, so every one counts."""
    for name, args in (("base.json", ()), ("slow.json", ("--suite-option", "toy.delay=0.001"))):
        ret, out = _run(toy, "--report-json", name, *args)
        assert ret == 0, out[-2000:]
    for name in ("base.json", "slow.json"):
        record = json.loads((toy.path / name).read_text())
        record["settings"].pop("protocol_options", None)  # as an older record
        (toy.path / f"old-{name}").write_text(json.dumps(record))
    base, slow = str(toy.path / "old-base.json"), str(toy.path / "old-slow.json")
    capsys.readouterr()
    assert cli_main(["report", base, "--baseline", base, "--no-step-summary"]) == 0
    _refused(
        capsys, ["report", slow, "--baseline", base], "toy.delay: 0.0 in the baseline, 0.001 in"
    )
    assert cli_main(["report", str(toy.path / "slow.json"), "--baseline", str(toy.path / "base.json"),
                     "--no-step-summary"]) == 0  # fmt: skip
