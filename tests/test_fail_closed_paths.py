"""A command's files are distinct, a project's gates are never dropped, a baseline covers
every selected suite, and a full disk is named as one: black-box, with and without -n 2.

Two paths naming one file (a baseline and the record, JUnit and the record, a merge's
shard and its output, a report's record and its HTML; symlinks followed) and an output
that is a folder are one usage line (exit 4) before any item runs, and no file is touched.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractbench.plugins.cli.main import main as cli_main
from extractbench.suites.locks import lock_file
from tests.conftest import PROJECT_ADDOPTS, TOY_CONFTEST
from tests.test_fail_closed_gates import GATED
from tests.test_plugin import MODES, run


def _no_traceback(result: pytest.RunResult) -> None:
    text = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in text and "INTERNALERROR" not in text, text[-3000:]


def _refused(result: pytest.RunResult, *lines: str) -> None:
    """Exit 4 with the lines, before any item ran."""
    assert result.ret == 4, result.stdout.str()[-3000:] + result.stderr.str()[-3000:]
    result.stderr.fnmatch_lines(list(lines))
    assert "test_toy.py" not in result.stdout.str()  # no item ran
    _no_traceback(result)


# ---------------------------------------------------------------- one file, two roles


@pytest.mark.parametrize("mode", MODES)
def test_a_baseline_named_as_the_record_is_refused_and_kept(toy, mode):
    first, _ = run(toy, mode)
    assert first.ret == 0
    record = toy.path / "record.json"
    before = record.read_bytes()
    result, _ = run(toy, mode, "--baseline", str(record), "--max-regression", "0.01")
    _refused(result, f"*--baseline {record} --report-json {record}: the same file*")
    assert record.read_bytes() == before
    (toy.path / "link.json").symlink_to(record)
    result, _ = run(toy, mode, "--baseline", "link.json")
    _refused(result, f"*--baseline link.json --report-json {record}: the same file*")
    assert record.read_bytes() == before


@pytest.mark.parametrize("mode", MODES)
def test_reports_named_as_the_record_are_refused(toy, mode):
    """Else the record replaced each report (or the other way), and PASS said every one
    was written."""
    record = toy.path / "record.json"
    record.write_text("an earlier file")
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", str(record), *mode,
        "--junitxml", str(record), "--html", str(record), "--summary-md", str(record),
        f"--export=ctrf={record}",
    )  # fmt: skip
    _refused(
        result,
        *(
            f"*--report-json {record} {option} {record}: the same file; give each its own path*"
            for option in ("--junitxml", "--html", "--summary-md", "--ctrf")
        ),
    )
    result.stderr.fnmatch_lines([f"*--junitxml {record} --html {record}: the same file*"])
    assert record.read_text() == "an earlier file"


@pytest.mark.parametrize("mode", MODES)
def test_two_reports_on_one_file_through_a_symlink_are_refused(toy, mode):
    (toy.path / "out").mkdir()
    (toy.path / "alias").symlink_to(toy.path / "out")
    result, record = run(toy, mode, "--html", "out/r.html", "--summary-md", "alias/r.html")
    _refused(result, "*--summary-md alias/r.html: the same file*")
    assert not (toy.path / "out" / "r.html").exists() and not record


@pytest.mark.parametrize("mode", MODES)
def test_outputs_that_are_folders_are_refused_at_start(toy, mode):
    # (pytest itself refuses a folder as --junitxml)
    options = ("--report-json", "--html", "--summary-md", "--ctrf")
    for option in options:
        (toy.path / option.strip("-")).mkdir()
    args = [arg for option in options for arg in (option, option.strip("-"))]
    result = toy.runpytest_subprocess("--backend", "fake", "--data-dir", "data", *mode, *args)
    _refused(
        result,
        *(f"*{o} *{o.strip('-')}: is a folder; give the path of a file to write*" for o in options),
    )
    assert all(not any((toy.path / o.strip("-")).iterdir()) for o in options)


@pytest.mark.parametrize("mode", MODES)
def test_report_and_merge_never_write_over_what_they_read(toy, mode, capsys):
    paths = []
    for k in (1, 2):
        path = toy.path / f"shard{k}.json"
        result = toy.runpytest_subprocess(
            "--backend", "fake", "--data-dir", "data", "--report-json", str(path),
            "--shard", f"{k}/2", *mode,
        )  # fmt: skip
        assert result.ret in (0, 5), result.stdout.str()[-3000:]
        paths.append(path)
    before = [p.read_bytes() for p in paths]
    capsys.readouterr()
    s1, s2 = map(str, paths)
    assert cli_main(["merge", s1, s2, "-o", s2]) == 4
    assert f"extractbench merge: record {s2} -o {s2}: the same file" in capsys.readouterr().err
    assert cli_main(["merge", s1, s2, "-o", str(toy.path / "m.json"), "--html", s1]) == 4
    assert f"record {s1} --html {s1}: the same file" in capsys.readouterr().err
    assert cli_main(["report", s1, "--html", s1]) == 4
    assert f"extractbench report: record {s1} --html {s1}: the same file" in (
        capsys.readouterr().err
    )
    assert cli_main(["report", s1, "--baseline", s2, "--summary-md", s2]) == 4
    assert cli_main(["report", s1, "--junitxml", str(toy.path)]) == 4
    assert "is a folder" in capsys.readouterr().err
    assert [p.read_bytes() for p in paths] == before
    assert not (toy.path / "m.json").exists()
    assert cli_main(["merge", s1, s2, "-o", str(toy.path / "m.json")]) == 0  # distinct: fine


# ---------------------------------------------------------------- gates of the project


@pytest.mark.parametrize("mode", MODES)
def test_project_gates_another_config_file_drops_are_a_usage_error(toy, mode):
    """-c other.ini while pyproject.toml declares gates: exit 4 naming --gates-file and
    --ignore-project-gates; each of those decides as it says."""
    toy.makepyprojecttoml(GATED)
    (toy.path / "other.ini").write_text(f"[pytest]\naddopts = {PROJECT_ADDOPTS}\n")
    config = ["-c", "other.ini", "--rootdir", str(toy.path)]
    result, record = run(toy, mode, *config)
    _refused(
        result,
        "*pyproject.toml declares gates (toy/accuracy>=0.9)*--gates-file *pyproject.toml; "
        "or --ignore-project-gates to run without them*",
    )
    assert not record
    result, record = run(toy, mode, *config, "--gates-file", "pyproject.toml")
    assert result.ret == 1 and record["gates"][0]["passed"] is False  # accuracy 15/24
    assert not any("declares gates" in w for w in record["warnings"])
    result, record = run(toy, mode, *config, "--ignore-project-gates")
    assert result.ret == 0 and record["gates"] == []
    assert "declares gates (toy/accuracy>=0.9)" in record["warnings"][0]


# ---------------------------------------------------------------- a partial baseline

TWO_SUITES_CONFTEST = """
from dataclasses import replace


def pytest_extractbench_suites():
    from toy_suite import SUITE, load

    def load2(data_dir, options):
        data = load(data_dir, options)
        data.items = [
            replace(it, id="toy2" + it.id[3:], group="toy2" + it.group[3:]) for it in data.items
        ]
        return data

    return [SUITE, replace(SUITE, name="toy2", test="test_toy2.py::test_toy2", load=load2)]
"""


@pytest.mark.parametrize("mode", MODES)
def test_a_baseline_without_a_selected_suite_fails_unless_allowed(toy, mode):
    toy.makeconftest(TWO_SUITES_CONFTEST)
    toy.makepyfile(
        test_toy2="from extractbench.plugins.run.suite_test import suite_test\n\ntest_toy2 = suite_test('toy2')\n"
    )
    first, base = run(toy, mode)
    assert first.ret == 0 and {it["suite"] for it in base["items"]} == {"toy", "toy2"}
    base["items"] = [it for it in base["items"] if it["suite"] == "toy"]
    (toy.path / "base.json").write_text(json.dumps(base))
    args = ("--baseline", "base.json", "--max-regression", "0.01")
    result, record = run(toy, mode, *args, "--junitxml", "junit.xml")
    assert result.ret == 1, result.stdout.str()[-3000:]
    assert record["verdict"]["word"] == "FAIL"
    assert record["baseline"]["failed"] and "lacks toy2" in record["baseline"]["reason"]
    result.stdout.fnmatch_lines(
        ["*baseline *lacks toy2: no scored item of it shared*--allow-partial-baseline*"]
    )
    junit = (toy.path / "junit.xml").read_text()
    assert 'name="baseline"' in junit and "lacks toy2" in junit
    allowed, record = run(toy, mode, *args, "--allow-partial-baseline")
    assert allowed.ret == 0 and not record["baseline"]["failed"]
    assert "allowed by --allow-partial-baseline" in record["baseline"]["reason"]
    without, record = run(toy, mode, "--baseline", "base.json")  # no --max-regression: a report
    assert without.ret == 0 and not record["baseline"]["failed"]


# ---------------------------------------------------------------- a full disk

FULL_DISK_CONFTEST = (
    TOY_CONFTEST
    + """
import errno
import os

_pwrite = os.pwrite


def _full(fd, data, offset):
    # the disk is full when a lock file of the JUnit report gets its holder's facts
    if os.readlink(f"/proc/self/fd/{fd}").endswith("junit.xml.lock"):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return _pwrite(fd, data, offset)


os.pwrite = _full
"""
)


@pytest.mark.parametrize("mode", MODES)
def test_a_full_disk_is_named_and_leaves_no_lock_file(toy, mode):
    toy.makeconftest(FULL_DISK_CONFTEST)
    result, record = run(toy, mode, "--junitxml", "junit.xml")
    assert result.ret == 6, result.stdout.str()[-3000:]
    [lost] = record["output_errors"]
    assert "junit.xml: not written (No space left on device)" in lost
    assert "another extractbench run" not in result.stdout.str() + result.stderr.str()
    assert not lock_file(Path(toy.path / "junit.xml")).exists()
    assert not (toy.path / "junit.xml").exists()
    _no_traceback(result)


def test_a_lock_whose_facts_cannot_be_written_is_let_go(tmp_path, monkeypatch):
    """The lock's descriptor is closed: this process can take it again (no "another run")."""
    import errno
    import os

    from extractbench.suites.locks import PathLock

    def full(fd: int, data: bytes, offset: int) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    path = tmp_path / "run.json"
    with monkeypatch.context() as patch:
        patch.setattr(os, "pwrite", full)
        with pytest.raises(OSError, match="No space left on device"):
            PathLock(path).acquire()
    assert not lock_file(path).exists()
    lock = PathLock(path).acquire()
    assert lock.held
    lock.release()
