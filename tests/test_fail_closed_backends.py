"""Fail closed with a server behind the model (issue 30): a hung or trickling server never
keeps the run alive after SIGTERM, and cached answers are reused only for the same server
build and model (its fingerprint), black-box through pytest and the fake OpenAI server."""

from __future__ import annotations

import signal
import sys
import time

import pytest

from tests.conftest import Output, interruptible, read_json
from tests.fake_openai import MODEL_ID, FakeOpenAIServer
from tests.test_fail_closed import _alive, _children

REQUEST_TIMEOUT = 10  # seconds (--request-timeout): the run must end within this + 5 s


def _wait_in_flight(server: FakeOpenAIServer, n: int, output: Output, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while server.in_flight < n:
        assert time.monotonic() < deadline, "".join(output.lines)[-3000:]
        assert output.proc.poll() is None, output.finish()[-3000:]
        time.sleep(0.1)


@pytest.mark.parametrize(
    ("fault", "mode", "stop"),
    [("hang", ["-n", "0"], signal.SIGTERM), ("trickle", ["-n", "0"], signal.SIGTERM),
     ("trickle", ["-n", "0"], signal.SIGINT), ("hang", ["-n", "2"], signal.SIGTERM),
     ("trickle", ["-n", "2"], signal.SIGTERM)],
    ids=["hang-serial", "trickle-serial", "trickle-serial-sigint", "hang-xdist", "trickle-xdist"],
)  # fmt: skip
def test_a_signal_ends_the_run_while_a_hung_server_holds_its_requests(toy, fault, mode, stop):
    """Four requests held by a server that never answers (or answers one byte every half
    second, so no read timeout fires): SIGTERM or Ctrl-C ends the run within
    --request-timeout + 5 s, with its record written (INCOMPLETE, exit 2).

    Under xdist the bound holds through execnet, which interrupts a busy worker 5 s after
    the controller asks it to stop (about 8 s in all, measured); serially the process
    ended 1.3 s after SIGTERM, against 4 x 10 s of timeouts and retries before the
    request threads became daemons (``fixtures/models/request_threads.py``)."""
    server = FakeOpenAIServer(fault=fault, hang_s=3600).start()
    record = toy.path / "record.json"
    args = [sys.executable, "-m", "pytest", "--backend", "openai", "--base-url", server.url,
            "--model-name", MODEL_ID, "--data-dir", "data", "--report-json", str(record),
            "--no-cache", "--concurrency", "4", "--request-timeout", str(REQUEST_TIMEOUT),
            "--max-retries", "3", "-p", "no:cacheprovider", *mode]  # fmt: skip
    proc = interruptible(args, toy.path)
    output = Output(proc)
    try:
        _wait_in_flight(server, 4 * (2 if "2" in mode else 1), output)
        workers = _children(proc.pid)
        start = time.monotonic()
        proc.send_signal(stop)
        try:
            proc.wait(timeout=REQUEST_TIMEOUT + 5)
        except Exception:
            proc.kill()
            raise AssertionError(
                f"still running {REQUEST_TIMEOUT + 5} s after {stop.name}:\n{output.finish()[-3000:]}"
            ) from None
        elapsed = time.monotonic() - start
        out = output.finish()
    finally:
        server.stop()
    print(f"exited {elapsed:.1f} s after {stop.name}")
    assert elapsed < REQUEST_TIMEOUT + 5
    assert proc.returncode == 2, out[-3000:]
    rec = read_json(record)
    assert rec["complete"] is False and rec["interrupted"] == stop.name
    assert "Traceback" not in out
    time.sleep(1)
    assert not any(_alive(pid) for pid in workers)  # no worker left behind either


def test_request_threads_run_calls_at_most_n_at_once_and_cancel_the_rest_on_shutdown():
    import threading

    from fixtures.models.request_threads import RequestThreads

    pool = RequestThreads(2)
    gate, running, peak = threading.Event(), [], []

    def call(i: int) -> int:
        running.append(i)
        peak.append(len(running))
        gate.wait(10)
        running.remove(i)
        if i == 1:
            raise ValueError("answer 1 is malformed")
        return i * 10

    futures = [pool.submit(call, i) for i in range(5)]
    while len(running) < 2:
        time.sleep(0.01)
    pool.shutdown()  # the three calls not started are cancelled
    gate.set()
    assert futures[0].result(5) == 0
    with pytest.raises(ValueError, match="answer 1"):
        futures[1].result(5)
    assert all(f.cancelled() for f in futures[2:]) and max(peak) == 2
    assert all(t.daemon for t in pool._threads)
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit(call, 9)
