"""Two runs never write one report at once: the one writer of reports
holds ``<path>.lock``; a second process on a held path fails with one line naming it and
the holder's pid, and the first run's file stays its own."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from extractbench.suites.files import NotARegularFile, atomic_write, write_output
from extractbench.suites.locks import OutputBusy, OutputLocks, PathLock, lock_file
from tests.conftest import Output, interruptible, read_json
from tests.test_plugin import MODES, run

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


@pytest.mark.parametrize("mode", MODES)
def test_a_held_every_eval_ever_folder_stops_a_second_run_as_a_held_record_does(toy, mode):
    """The export's folder is locked from the run's start like the record, JUnit and HTML:
    a second run on it fails at once (exit 4, one line naming the folder and the holder's
    pid) and writes nothing into it."""
    folder = toy.path / "eee"
    first = _holder(folder / "first.json", folder)  # its own file in the folder, and its lock
    try:
        result, record = run(toy, mode, "--export", f"every-eval-ever={folder}")
    finally:
        first.communicate("", timeout=30)
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 4, out[-3000:]
    assert f"another extractbench run is writing {folder} (pid {first.pid}" in result.stderr.str()
    assert "Traceback" not in out and record == {}
    assert sorted(os.listdir(folder)) == ["first.json"]  # the first run's folder, untouched
    assert (folder / "first.json").read_text() == "A, final" and not lock_file(folder).exists()


# ------------------------------------------------------------- devices, FIFOs, /proc


def _device(tmp_path: Path, name: str, minor: int) -> Path:
    """A character device made in ``tmp_path`` (1, 3: a null device; 1, 7: a full one),
    never the machine's own ``/dev/null``."""
    path = tmp_path / name
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("making a character device needs root (CAP_MKNOD)")
    return path


@pytest.mark.parametrize("mode", MODES)
def test_a_character_device_output_is_written_in_place_and_stays_a_device(toy, tmp_path, mode):
    """--junitxml on a null device (what /dev/null is) discards the file and stays a device;
    on a full device (/dev/full) the write fails as an output error; no lock file beside it."""
    null, full = _device(tmp_path, "null", 3), _device(tmp_path, "full", 7)
    result, record = run(toy, mode, "--junitxml", str(null), "--html", str(null))
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert stat.S_ISCHR(null.stat().st_mode) and null.read_bytes() == b""
    assert not lock_file(null).exists() and sorted(os.listdir(tmp_path)) == ["full", "null"]
    result, record = run(toy, mode, "--summary-md", str(full))
    assert result.ret == 6, result.stdout.str()[-2000:]
    [lost] = record["output_errors"]
    assert lost == f"--summary-md {full}: not written (No space left on device)"
    assert stat.S_ISCHR(full.stat().st_mode)
    record_path = toy.path / "dev-record.json"
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", str(full), *mode
    )
    assert result.ret == 6 and stat.S_ISCHR(full.stat().st_mode)  # never removed as "stale"
    result.stdout.fnmatch_lines(
        [f"*run record {full}: No space left on device; it is a character device, left as it is*"]
    )
    assert not record_path.exists()


@pytest.mark.parametrize("mode", MODES)
def test_a_fifo_or_a_proc_file_as_an_output_is_a_usage_line_before_any_item(toy, tmp_path, mode):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    result, _ = run(toy, mode, "--junitxml", str(fifo), "--html", "/proc/version")
    assert result.ret == 4, result.stdout.str()[-2000:]
    result.stderr.fnmatch_lines(
        [f"*--junitxml {fifo}: is a FIFO (named pipe), not a regular file; give the path of a file*",
         "*--html /proc/version: no file can be created in /proc (*); give a path in a folder you can write*"]
    )  # fmt: skip
    assert "test_toy.py" not in result.stdout.str() and stat.S_ISFIFO(fifo.stat().st_mode)


def test_the_one_writer_never_renames_over_a_device_or_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotARegularFile, match="is a FIFO"):
        atomic_write(fifo, "x")
    with pytest.raises(NotARegularFile, match="is a FIFO"):
        write_output(fifo, "x")
    null = _device(tmp_path, "null", 3)
    with pytest.raises(NotARegularFile, match="is a character device"):
        atomic_write(null, "x")  # caches and data never write into a device
    assert write_output(null, "x") == null and stat.S_ISCHR(null.stat().st_mode)
    assert sorted(os.listdir(tmp_path)) == ["null", "pipe"]


@pytest.mark.parametrize("mode", MODES)
def test_benchmark_json_is_in_the_one_path_check_and_says_why_it_is_not_written(toy, mode):
    pytest.importorskip("pytest_benchmark")
    record = toy.path / "record.json"
    result, _ = run(toy, mode, "--benchmark-json", str(record))
    assert result.ret == 4
    result.stderr.fnmatch_lines(
        [f"*--report-json {record} --benchmark-json {record}: the same file*"]
    )
    bench = toy.path / "bench.json"
    first, _ = run(toy, mode, "--benchmark-json", str(bench))  # the cache fills
    assert first.ret == 0 and json.loads(bench.read_text())["benchmarks"]
    bench.unlink()
    again, record_data = run(toy, mode, "--benchmark-json", str(bench))  # all from the cache
    assert again.ret == 0 and not bench.exists()
    [line] = [w for w in record_data["warnings"] if "--benchmark-json" in w]
    assert "not written: no model call of this run was timed" in line
    again.stdout.fnmatch_lines(["warning: --benchmark-json *not written: no model call*"])


@pytest.mark.parametrize("mode", MODES)
def test_a_record_on_a_character_device_makes_no_folder_beside_it(toy, tmp_path, mode):
    """--report-json on a null device, the plots asked for: nothing is made beside the
    device (with the machine's /dev/null that folder would be in /dev); with an HTML file
    also given, the plots go beside that file."""
    null = _device(tmp_path, "null", 3)
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", str(null),
        "--report-plots", "on", *mode,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert os.listdir(tmp_path) == ["null"] and stat.S_ISCHR(null.stat().st_mode)
    html = toy.path / "out" / "page.html"
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", str(null),
        "--report-plots", "on", "--html", str(html), *mode,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert os.listdir(tmp_path) == ["null"]
    [side] = [p for p in html.parent.iterdir() if p.is_dir()]
    assert any(p.suffix == ".png" for p in side.iterdir())


@pytest.mark.parametrize("mode", MODES)
def test_an_output_under_a_regular_file_is_a_usage_line_before_any_item(toy, mode):
    """``--html afile/x.html``: the write after the run would fail with "Not a directory";
    the one path check refuses it first, for every output option, however deep."""
    (toy.path / "afile").write_text("a file\n")
    result, record = run(
        toy, mode, "--html", "afile/x.html", "--ctrf", "afile/deep/c.json",
        "--summary-md", "new/folder/s.md",
    )  # fmt: skip
    assert result.ret == 4, result.stdout.str()[-2000:]
    result.stderr.fnmatch_lines(
        [f"*--html *afile/x.html: {toy.path / 'afile'} is a file, not a folder; give a path in a folder*",
         f"*--ctrf afile/deep/c.json: {toy.path / 'afile'} is a file, not a folder*"]
    )  # fmt: skip
    assert "summary-md" not in result.stderr.str()  # a missing folder is made at the write
    assert "test_toy.py" not in result.stdout.str() and not record


def test_an_output_on_a_symbolic_link_replaces_the_link_and_leaves_its_target(toy):
    """As docs/usage.md says: the atomic write renames its file over the link; the file
    the link pointed to keeps its bytes."""
    target = toy.path / "kept.md"
    target.write_text("the team's own file\n")
    link = toy.path / "summary.md"
    link.symlink_to(target)
    result, _ = run(toy, [], "--summary-md", str(link))
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert not link.is_symlink() and "extractbench" in link.read_text()
    assert target.read_text() == "the team's own file\n"
