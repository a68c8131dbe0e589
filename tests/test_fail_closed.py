"""A release decision never rests on nothing: black-box tests of the fail-closed cases,
faults (killed worker, SIGTERM, a failing server) and reading records safely."""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from extractbench.fixtures.models.fake.backend import FakeBackend
from extractbench.fixtures.models.wrappers import CachingBackend
from extractbench.plugins.cli.main import main as cli_main
from extractbench.suites.model import ModelLoadError
from tests.conftest import Output, decide_facts, interruptible, read_json
from tests.fake_openai import MODEL_ID, FakeOpenAIServer, chat_unless_given
from tests.test_plugin import FAILING_SUITE, MODES, run


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# ---------------------------------------------------------------- rescore, baseline


def test_rescore_of_a_record_without_the_selected_suites_is_a_usage_error(toy):
    _, record = run(toy, [])
    for item in record["items"]:
        item["suite"] = "fda"
    (toy.path / "other.json").write_text(json.dumps(record))
    result, _ = run(toy, [], "--rescore", str(toy.path / "other.json"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*record holds no item of the selected suites (toy); it holds: fda*"]
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_baseline_sharing_no_item_fails_unless_allowed(toy, mode):
    _, base = run(toy, [])
    for item in base["items"]:
        item["id"] = item["id"].replace("toy/", "toy/old-")
    (toy.path / "base.json").write_text(json.dumps(base))
    args = ("--baseline", str(toy.path / "base.json"), "--max-regression", "0.01")
    result, record = run(toy, mode, *args)
    assert result.ret == 1
    assert record["baseline"]["failed"] and record["baseline"]["shared_items"] == 0
    result.stdout.fnmatch_lines(
        ["*not comparable: no item shared (24 in this run, 24 in the baseline)*"]
    )
    allowed, record = run(toy, mode, *args, "--allow-incomparable-baseline")
    assert allowed.ret == 0 and not record["baseline"]["failed"]


def test_a_partial_baseline_overlap_reports_the_shared_count(toy):
    _, base = run(toy, [])
    base["items"] = base["items"][:10]
    (toy.path / "base.json").write_text(json.dumps(base))
    result, record = run(toy, [], "--baseline", str(toy.path / "base.json"))
    assert result.ret == 0 and record["baseline"]["shared_items"] == 10
    result.stdout.fnmatch_lines(["*10 items shared (24 in this run, 10 in the baseline)*"])


# ---------------------------------------------------------------- extractbench report


@pytest.mark.parametrize("case", ["all-failed", "incomplete", "no-items", "passed"])
def test_extractbench_report_gives_the_runs_own_verdict(toy, case, capsys):
    extra: list[str] = []
    if case == "all-failed":
        toy.makepyfile(toy_suite=FAILING_SUITE)
    if case == "no-items":
        (toy.path / "data" / "toy.jsonl").unlink()
        extra = ["--skip-missing-data"]
    result, record = run(toy, [], *extra)
    path = toy.path / "record.json"
    if case == "incomplete":  # as a run stopped before every item finished leaves it
        record["items"] = record["items"][:5]
        record["counts"].update(items=5, scored=5)
        record["complete"] = False
        path.write_text(json.dumps(record))
        expected = 1
    else:
        expected = result.ret
    assert cli_main(["report", str(path)]) == expected
    out = capsys.readouterr().out
    word = {"all-failed": "FAIL", "incomplete": "INCOMPLETE", "no-items": "NOT EVALUATED",
            "passed": "PASS"}[case]  # fmt: skip
    assert f"extractbench verdict: {word}" in out
    md = toy.path / "s.md"
    assert cli_main(["report", str(path), "--summary-md", str(md)]) == expected
    assert md.read_text().startswith(f"## extractbench {word} (exit {expected})")


def test_a_record_cannot_make_report_import_a_module(toy, tmp_path):
    """A record names no code: a field that would is not in its schema (exit 4, named), and
    a suite the registry does not know gets no report, whatever the record says."""
    _, record = run(toy, [])
    folder = tmp_path / "received"
    folder.mkdir()
    (folder / "evil.py").write_text("open('MARKER', 'w').write('ran')\n")
    root = Path(__file__).resolve().parents[1]

    def report(data: dict) -> subprocess.CompletedProcess:
        (folder / "RUN.json").write_text(json.dumps(data))
        return subprocess.run(
            [sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); from extractbench.plugins.cli.main "
             "import main; sys.exit(main(['report', 'RUN.json', '--summary-md', 'o.md']))", str(root)],
            cwd=folder, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(folder)},
        )  # fmt: skip

    named = json.loads(json.dumps(record))
    named["suites"]["toy"]["report"] = "evil"
    proc = report(named)
    assert proc.returncode == 4 and "field suites.toy.report is string 'evil'" in proc.stderr
    unknown = json.loads(json.dumps(record))
    unknown["suites"]["evil"] = {"breakdown": [], "notes": {"report": "evil"}}
    proc = report(unknown)
    assert proc.returncode == 0, proc.stderr
    assert not (folder / "MARKER").exists()


@pytest.mark.parametrize("mode", MODES)
def test_a_failing_plain_test_beside_the_suite_is_not_hidden_by_the_verdict(toy, mode):
    toy.makepyfile(test_helper="def test_helper():\n    assert 1 == 2\n")
    result, record = run(toy, mode)
    assert result.ret == 1 and record["exit_status"] == 1
    assert [t["nodeid"] for t in record["other_tests"] if t["outcome"] == "failed"] == [
        "test_helper.py::test_helper"
    ]
    result.stdout.fnmatch_lines(
        ["*verdict: FAIL (exit 1): 1 other tests failed: test_helper.py::test_helper*"]
    )


# ---------------------------------------------------------------- outputs


@pytest.mark.parametrize("mode", MODES)
def test_a_run_record_under_a_regular_file_is_refused_before_any_item(toy, mode):
    """The write after the run would fail ("Not a directory"): the one path check refuses
    it first (exit 4), and the earlier run's record stays (an output that fails at the
    write, a full device: tests/test_fail_closed_outputs.py, exit 6)."""
    (toy.path / "afile").write_text("not a folder")
    result, before = run(toy, mode)  # a good record at record.json first
    assert result.ret == 0
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", "afile/run.json", *mode
    )
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--report-json afile/run.json: * is a file, not a folder*"])
    assert "test_toy.py" not in result.stdout.str()
    assert read_json(toy.path / "record.json") == before


def test_a_full_disk_exits_6_and_removes_the_earlier_record(toy):
    result, before = run(toy, [])
    assert result.ret == 0 and before
    limit = 4096  # bytes: the record does not fit, as on a full disk

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--backend", "fake", "--data-dir", "data", "--no-cache",
         "-p", "no:cacheprovider", "--report-json", "record.json"],
        cwd=toy.path, capture_output=True, text=True, preexec_fn=small_disk,
    )  # fmt: skip
    assert proc.returncode == 6, proc.stdout[-2000:]
    assert "NOT WRITTEN: run record record.json: File too large" in proc.stdout
    assert "earlier run's record that was there has been removed" in proc.stdout
    assert not (toy.path / "record.json").exists()


@pytest.mark.parametrize("mode", MODES)
def test_an_unwritable_summary_exits_6_and_the_record_says_so(toy, mode):
    """A summary whose write fails after the run (a full device): exit 6, named."""
    full = toy.path / "full"
    try:
        os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except PermissionError:
        pytest.skip("making a character device needs root (CAP_MKNOD)")
    result, record = run(toy, mode, "--summary-md", str(full))
    assert result.ret == 6
    assert record["exit_status"] == 6 and record["verdict"]["word"] == "FAIL"
    assert record["output_errors"][0].startswith(f"--summary-md {full}:")
    assert "Traceback" not in result.stdout.str()


# ---------------------------------------------------------------- items and models


@pytest.mark.parametrize("mode", MODES)
def test_a_model_that_fails_to_load_is_one_usage_error(toy, mode):
    toy.makeconftest(
        (toy.path / "conftest.py").read_text()
        + "\nimport extractbench.fixtures.models.fake.backend as fake\n"
        "def _broken(self):\n    raise RuntimeError('tensor data is truncated')\n"
        "fake.FakeBackend.__init__ = _broken\n"
    )
    result, record = run(toy, mode, "--no-cache")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert record["usage_errors"] == [
        "model fake-lookup failed to load: RuntimeError: tensor data is truncated"
    ]
    assert record["counts"]["items"] < 24  # the run stopped instead of retrying per item
    result.stdout.fnmatch_lines(["*verdict: FAIL (exit 4): model fake-lookup failed to load*"])


def test_a_failed_load_is_not_retried_for_every_item():
    calls = []

    def load():  # noqa: ANN202
        calls.append(1)
        raise ValueError("bad GGUF")

    model = CachingBackend(FakeBackend().info, "fp", load, None)
    for _ in range(3):
        with pytest.raises(ModelLoadError, match="failed to load: ValueError: bad GGUF"):
            model.generate("p", max_tokens=4)
    assert len(calls) == 1


def test_a_gguf_that_llama_cpp_cannot_load_is_a_usage_error_before_any_item(toy):
    pytest.importorskip("llama_cpp")
    (toy.path / "broken.gguf").write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + os.urandom(4096))
    start = time.monotonic()
    result = toy.runpytest_subprocess("--model", "broken.gguf", "--data-dir", "data", "-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert time.monotonic() - start < 30
    result.stderr.fnmatch_lines(["ERROR: --model *broken.gguf: llama.cpp cannot load*"])
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()


@pytest.mark.parametrize("option", ["nosuite.x=1", "toy.x=1"])
def test_an_unknown_suite_option_is_a_usage_error(toy, option):
    result, _ = run(toy, [], "--suite-option", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    expected = (
        "*unknown suite 'nosuite'; known suites: fda, *toy*"
        if option.startswith("nosuite")
        else "*--suite-option unknown toy option(s) x; known: delay"
    )
    result.stderr.fnmatch_lines([expected])


def test_a_corrupt_generation_cache_is_one_usage_error(toy):
    _, first = run(toy, [])
    cache = toy.path / ".extractbench" / "cache.sqlite"
    data = bytearray(cache.read_bytes())
    data[100:] = os.urandom(len(data) - 100)  # garbage pages after the header
    cache.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        Path(str(cache) + suffix).unlink(missing_ok=True)
    result, _ = run(toy, ["-n", "2"])
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"ERROR: generation cache {cache}: cannot be used*delete the file*--no-cache*"]
    )
    assert "passed" not in result.stdout.str()


# ---------------------------------------------------------------- faults


def test_a_killed_worker_ends_the_run_promptly_and_is_recorded(toy):
    record = toy.path / "record.json"
    args = [sys.executable, "-m", "pytest", "--backend", "fake", "--data-dir", "data",
            "--report-json", str(record), "--suite-option", "toy.delay=0.5", "-p", "no:cacheprovider",
            "-n", "2", "--no-cache"]  # fmt: skip
    proc = interruptible([*args, "-v"], toy.path)
    output = Output(proc)
    assert output.wait_for("PASSED", 2), output.finish()[-3000:]  # both workers are running items
    workers = _children(proc.pid)
    assert workers, "no xdist workers found"
    os.kill(workers[0], signal.SIGKILL)  # as the out-of-memory killer does
    start = time.monotonic()
    out = output.finish(timeout=60)
    assert time.monotonic() - start < 60
    rec = read_json(record)
    assert proc.returncode == 7, out[-3000:]  # CRASHED
    assert rec["complete"] is False and len(rec["crashes"]) == 1
    crash = rec["crashes"][0]
    assert crash["worker"].startswith("gw")
    crashed = next(it for it in rec["items"] if it["id"] == crash["item"])
    assert crashed["outcome"] == "failed" and crash["worker"] in crashed["error"]
    assert crash["signal"] is None and "no fault report" in crash["message"]  # SIGKILL
    assert len(rec["items"]) == 24 and rec["counts"]["failed"] == 1  # the rest finished, once
    assert rec["verdict"]["word"] == "CRASHED"
    assert "INTERNALERROR" not in out


@pytest.mark.parametrize("mode", MODES)
def test_two_ctrl_c_in_half_a_second_end_as_one_interruption(toy, mode):
    """Ctrl-C twice, 0.3 s apart, to the run's process group (as a terminal sends it, the
    xdist workers too): the second is absorbed by the shutdown, which writes the record;
    exit 2 and ``interrupted: SIGINT`` in the record, JUnit and terminal, no traceback."""
    record, junit = toy.path / "record.json", toy.path / "junit.xml"
    args = [sys.executable, "-m", "pytest", "--backend", "fake", "--data-dir", "data",
            "--report-json", str(record), "--junitxml", str(junit), "--suite-option",
            "toy.delay=0.4", "-p", "no:cacheprovider", "--no-cache", "-v", *mode]  # fmt: skip
    proc = interruptible(args, toy.path, start_new_session=True)
    output = Output(proc)
    assert output.wait_for("PASSED", 2), output.finish()[-3000:]
    os.killpg(proc.pid, signal.SIGINT)
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)
    out = output.finish(timeout=90)
    assert proc.returncode == 2, out[-3000:]
    assert (
        "Traceback" not in out and out.count("to show a full traceback on KeyboardInterrupt") <= 1
    )
    rec = read_json(record)
    assert rec["interrupted"] == "SIGINT" and rec["exit_status"] == 2
    assert rec["verdict"]["word"] == "INCOMPLETE" and rec["complete"] is False
    text = junit.read_text()
    assert 'name="extractbench.exit_status" value="2"' in text and "interrupted by SIGINT" in text
    assert "extractbench verdict: INCOMPLETE (exit 2): interrupted by SIGINT" in out


@pytest.mark.parametrize("mode", MODES)
def test_sigterm_writes_a_record_and_stops_the_workers(toy, mode):
    record = toy.path / "record.json"
    args = [sys.executable, "-m", "pytest", "--backend", "fake", "--data-dir", "data",
            "--report-json", str(record), "--suite-option", "toy.delay=0.4", "-p", "no:cacheprovider",
            "--no-cache", *mode]  # fmt: skip
    proc = interruptible([*args, "-v"], toy.path)
    output = Output(proc)
    assert output.wait_for("PASSED", 2), output.finish()[-3000:]
    workers = _children(proc.pid)
    proc.send_signal(signal.SIGTERM)
    out = output.finish(timeout=60)
    assert proc.returncode == 2, out[-3000:]
    rec = read_json(record)
    assert rec["complete"] is False and rec["interrupted"] == "SIGTERM"
    assert 0 < rec["counts"]["scored"] < 24
    assert all(g["passed"] is None for g in rec["gates"])
    toy_suite = rec["suites"]["toy"]  # filled from the workers' first reports under -n
    assert toy_suite["breakdown"] == ["key"] and toy_suite["notes"]["rows"] == 24
    time.sleep(1)
    assert not any(_alive(pid) for pid in workers)


# ---------------------------------------------------------------- a failing server


def openai_run(toy, server, *args):
    record = toy.path / "openai.json"
    result = toy.runpytest_subprocess(
        "--backend", "openai", "--base-url", server.url, "--model-name", MODEL_ID,
        "--data-dir", "data", "--report-json", str(record), "--no-cache", *args,
        *chat_unless_given(args),
    )  # fmt: skip
    return result, (read_json(record) if record.exists() else {})


@pytest.mark.parametrize("mode", MODES)
def test_a_server_failing_every_request_trips_the_circuit_breaker(toy, mode):
    server = FakeOpenAIServer(fault="500").start()
    try:
        start = time.monotonic()
        result, record = openai_run(toy, server, "--max-retries", "1", "--max-failures", "4", *mode)
        elapsed = time.monotonic() - start
    finally:
        server.stop()
    assert result.ret == 1
    assert record["complete"] is False
    assert record["stopped"].startswith(
        f"{server.url}: 4 consecutive failed requests; last error: HTTP 500"
    )
    assert len(server.requests) <= 4 * 2 + 4  # each worker stops at 4 (+ the items in flight)
    assert elapsed < 60
    result.stdout.fnmatch_lines(
        ["*verdict: INCOMPLETE (exit 1): run stopped: *4 consecutive failed requests*"]
    )


def test_a_hung_server_is_cut_by_the_request_timeout(toy):
    server = FakeOpenAIServer(fault="hang").start()
    try:
        start = time.monotonic()
        result, record = openai_run(
            toy, server, "--request-timeout", "1", "--max-retries", "0", "--max-failures", "2"
        )
        elapsed = time.monotonic() - start
    finally:
        server.stop()
    assert result.ret == 1 and elapsed < 30
    assert "2 consecutive failed requests" in record["stopped"]
    assert "Timeout" in record["stopped"]


def test_an_answer_over_the_budget_is_truncated_and_flagged(toy):
    server = FakeOpenAIServer(fault="huge").start()
    try:
        result, record = openai_run(toy, server, "--limit", "3")
    finally:
        server.stop()
    assert result.ret == 0
    calls = [c for it in record["items"] for c in it["calls"]]
    assert len(calls) == 3 and all(c["truncated"] for c in calls)
    assert all(len(c["text"]) == 8 * 32 and c["completion_tokens"] == 8 for c in calls)
    assert (toy.path / "openai.json").stat().st_size < 200_000


@pytest.mark.parametrize(
    ("fault", "reason"),
    [("badjson", "malformed answer"), ("nonutf8", "malformed answer"),
     ("nochoices", "no choices"), ("nulltext", "choice 0 has no text"),
     ("badusage", "bad usage")],
)  # fmt: skip
def test_a_malformed_answer_is_a_model_error_with_the_reason(toy, fault, reason):
    server = FakeOpenAIServer(fault=fault).start()
    try:
        result, record = openai_run(toy, server, "--limit", "2")
    finally:
        server.stop()
    assert result.ret == 1
    errors = [it["error"] for it in record["items"]]
    assert len(errors) == 2 and all("ModelError" in e and reason in e for e in errors), errors
    assert not any(t in e for e in errors for t in ("IndexError", "TypeError", "AttributeError"))


def test_the_verdict_never_hides_a_pytest_internal_error():
    record = {"items": [{"id": "t/1", "suite": "t", "scores": {"a": 1.0}}],
              "counts": {"items": 1, "expected": 1}}  # fmt: skip
    assert decide_facts("t/a>=0.5", **record).status == 0
    assert decide_facts("t/a>=0.5", **record, pytest_exit_status=3).status == 3


@pytest.mark.parametrize(
    "argv",
    [["report"], ["report", "r.json", "--no-such-flag"], ["merge"], ["data", "fetch", "--mirror"],
     ["data", "fetch", "--mirror", "ftp://mirror.example/data"], ["nonsense"]],
)  # fmt: skip
def test_a_command_line_mistake_of_extractbench_exits_4_not_2(argv, capsys):
    """2 is INCOMPLETE's code; a mistyped command is a usage error (4), as in pytest."""
    with pytest.raises(SystemExit) as exited:
        code = cli_main(argv)
        raise SystemExit(code)
    assert exited.value.code == 4
    err = capsys.readouterr().err
    assert "error:" in err or "--mirror ftp://mirror.example/data: must be" in err


def test_report_renders_a_record_whose_predictions_are_objects(toy, capsys):
    """MINEA and Struc-Bench predictions may be objects or lists: the page shows them as
    JSON instead of a traceback, and the exit status is the record's verdict; a score that
    is not a number is a malformed record (exit 4, naming the field)."""
    _, record = run(toy, [], "--no-cache")
    record["items"][0]["prediction"] = {"Person": ["Ada <Lovelace>"]}
    record["items"][1]["prediction"] = [["a", "b"], ["1", "2"]]
    bad = toy.path / "bad-score.json"
    bad.write_text(json.dumps({**record, "items": [
        {**record["items"][2], "scores": {"length": "n/a"}}]}))  # fmt: skip
    assert cli_main(["report", str(bad)]) == 4
    assert (
        "field items[0].scores.length is string 'n/a', expected a number" in capsys.readouterr().err
    )
    path = toy.path / "objects.json"
    path.write_text(json.dumps(record))
    html = toy.path / "page.html"
    status = cli_main(
        ["report", str(path), "--html", str(html), "--summary-md", str(toy.path / "s.md")]
    )
    assert status == record["exit_status"] == 0, capsys.readouterr().err
    page = html.read_text()
    assert "{&#34;Person&#34;: [&#34;Ada &lt;Lovelace&gt;&#34;]}" in page
    assert "[[&#34;a&#34;, &#34;b&#34;], [&#34;1&#34;, &#34;2&#34;]]" in page


@pytest.mark.parametrize(
    ("change", "message"),
    [({"schema_version": "1"}, "field schema_version is string '1', expected an integer (2)"),
     ({"items": {}}, "field items is object {}, expected an array"),
     ({"complete": "yes"}, "field complete is string 'yes', expected true or false"),
     ({"items": [{"id": 3, "suite": "t"}]}, "field items[0].id is integer 3, expected a string"),
     ({"gates": [{"expression": "t/a>=1"}]}, "field gates[0].metric, expected present")],
)  # fmt: skip
def test_a_malformed_record_names_the_field_and_the_expected_type(tmp_path, change, message):
    from extractbench.plugins.record import SCHEMA_VERSION, RecordError, load_record

    path = tmp_path / "r.json"
    record = {"schema_version": SCHEMA_VERSION, "run_id": "r", "items": [], **change}
    path.write_text(json.dumps(record))
    with pytest.raises(RecordError) as raised:
        load_record(path)
    assert str(raised.value) == f"{path}: {message}"
    assert cli_main(["report", str(path)]) == 4


@pytest.mark.parametrize("mode", MODES)
def test_a_gate_of_a_suite_whose_data_did_not_load_names_that_cause(toy, mode):
    data = toy.path / "data" / "toy.jsonl"
    data.write_text(data.read_text() + "{broken\n")
    result, record = run(toy, mode, "--gate", "toy/accuracy>=0.1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    [gate] = record["gates"]
    assert gate["passed"] is None
    assert gate["reason"] == f"not evaluated: suite 'toy' did not load ({data}:25: not valid JSON)"
