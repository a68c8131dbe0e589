"""Two runs never write one report at once: the one writer of reports
holds ``<path>.lock``; a second process on a held path fails with one line naming it and
the holder's pid, and the first run's file stays its own."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from extractbench.suites.files import atomic_write, write_output
from extractbench.suites.locks import OutputBusy, OutputLocks, PathLock, lock_file

from tests.conftest import Output, interruptible, read_json

ROOT = Path(__file__).resolve().parents[1]

# A process that holds the locks of its argv's paths until its stdin closes, writing
# "A" into the first path under them first.
HOLDER = """
import sys
from pathlib import Path
from extractbench.suites.files import write_output
from extractbench.suites.locks import OutputLocks

locks = OutputLocks(Path(p) for p in sys.argv[1:]).acquire()
write_output(Path(sys.argv[1]), "A")
print("held", flush=True)
sys.stdin.read()
write_output(Path(sys.argv[1]), "A, final")
locks.release()
print("released", flush=True)
"""


def _holder(*paths: Path) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, *map(str, paths)], cwd=ROOT, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline() == "held\n"
    return proc


def test_a_second_process_cannot_write_a_held_report_and_is_told_who_holds_it(tmp_path):
    record, junit = tmp_path / "reports" / "run.json", tmp_path / "junit.xml"
    first = _holder(record, junit)
    try:
        with pytest.raises(OutputBusy) as busy:
            write_output(record, "B")
        message = str(busy.value)
        assert message == (
            f"another extractbench run is writing {record} (pid {first.pid}, since "
            f"{busy.value.holder['since']}); wait for it to end or give this run another path"
        )
        assert "\n" not in message and busy.value.path == record
        assert record.read_text() == "A"  # the holder's file, untouched
        with pytest.raises(OutputBusy, match=f"writing {junit} .pid {first.pid}"):
            OutputLocks([tmp_path / "other.json", junit]).acquire()
        assert not lock_file(tmp_path / "other.json").exists()  # all or none
    finally:
        first.communicate("", timeout=30)
    assert first.returncode == 0 and record.read_text() == "A, final"
    assert not lock_file(record).exists() and not lock_file(junit).exists()
    write_output(record, "B")  # free again
    assert record.read_text() == "B"


def test_an_unwritable_output_is_noted_not_locked_when_asked(tmp_path):
    (tmp_path / "afile").write_text("")
    bad, good = tmp_path / "afile" / "run.json", tmp_path / "junit.xml"
    with pytest.raises(OSError):
        OutputLocks([bad, good]).acquire()
    assert not lock_file(good).exists()
    locks = OutputLocks([bad, good]).acquire(skip_unwritable=True)
    assert list(locks.unwritable) == [bad] and lock_file(good).exists()
    with pytest.raises(OSError):  # its write fails later, as an output error
        write_output(bad, "x")
    locks.release()
    assert not lock_file(good).exists()


def test_a_holder_killed_by_sigkill_leaves_no_lock(tmp_path):
    record = tmp_path / "run.json"
    first = _holder(record)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=30)
    assert lock_file(record).exists()  # the file stays, the kernel's lock does not
    with OutputLocks([record]) as locks:
        write_output(record, "after the crash")
        assert all(lock.held for lock in locks.locks)
    assert record.read_text() == "after the crash" and not lock_file(record).exists()


def test_a_lock_is_taken_once_per_process_and_waits_when_asked(tmp_path):
    path = tmp_path / "run.json"
    with PathLock(path):
        with pytest.raises(OutputBusy, match=f"pid {os.getpid()}"):
            PathLock(path).acquire()
        write_output(path, "held here")  # the holder's own writes go through
    first = _holder(path)
    first.stdin.close()  # type: ignore[union-attr]  # it writes, then lets go
    with PathLock(path, "fetching into").acquire(wait=True):
        assert path.read_text() == "A, final"
    first.wait(timeout=30)


def test_atomic_write_gives_the_umask_permissions_and_leaves_no_temporary_file(tmp_path):
    path = atomic_write(tmp_path / "deep" / "r.json", "x")
    assert path.read_text() == "x"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask  # not mkstemp's 0600
    (tmp_path / "r.json").mkdir()  # the rename fails: a folder holds the name
    with pytest.raises(OSError):
        atomic_write(tmp_path / "r.json", "new")
    assert sorted(os.listdir(tmp_path)) == ["deep", "r.json"]  # no .r.json.*.tmp left


def test_two_runs_on_one_report_json_the_second_fails_and_the_first_record_stays(toy):
    record = toy.path / "record.json"
    args = [sys.executable, "-m", "pytest", "--backend", "fake", "--data-dir", "data",
            "--report-json", str(record), "-p", "no:cacheprovider", "--no-cache"]  # fmt: skip
    first = interruptible([*args, "--suite-option", "toy.delay=0.2", "-v"], toy.path)
    output = Output(first)
    try:
        assert output.wait_for("PASSED", 1), output.finish()[-3000:]
        second = subprocess.run(
            [*args, "--suite-option", "toy.delay=0"], cwd=toy.path, capture_output=True,
            text=True, timeout=300,
        )  # fmt: skip
    finally:
        out = output.finish(timeout=300)
    assert first.returncode == 0, out[-3000:]
    assert second.returncode == 4, second.stdout[-3000:] + second.stderr[-3000:]
    assert f"another extractbench run is writing {record} (pid {first.pid}" in second.stderr
    assert "Traceback" not in second.stderr + second.stdout
    rec = read_json(record)
    assert "toy.delay=0.2" in rec["settings"]["argv"]  # the first run's record, whole
    assert rec["complete"] is True and rec["counts"]["scored"] == 24
    assert not lock_file(record).exists()
