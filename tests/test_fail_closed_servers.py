"""Fail closed with a misbehaving OpenAI-compatible server, black-box through pytest: a
server that echoes the run's credentials gets none of them into any output, one that
trickles its answer is cut at ``--request-timeout`` (the whole request), and a 429's
``Retry-After`` is honoured up to its cap. Each server listens on 127.0.0.1, started and
stopped by its test."""

from __future__ import annotations

import base64
import json
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from extractbench.fixtures.models.fake.backend import FakeBackend
from tests.conftest import read_json, require_installed
from tests.fake_openai import MODEL_ID, chat_unless_given
from tests.test_plugin import MODES

PLANTED_KEY = "sk-PLANTED-api-key-0123456789"
PLANTED_PASSWORD = "PLANTED-url-pass%2Fword"  # percent-encoded in the URL: "/" decoded
RUN_LIMIT_S = 120  # no run below may take longer (a hang fails the test, never blocks it)


class EvilServer:
    """An OpenAI-compatible server (``GET /v1/models``, ``POST /v1/completions``) whose
    completions misbehave as ``mode`` says:

    - ``echo``: every other request is a 401 whose error message echoes the request's
      ``Authorization`` header (as some proxies do), the others a 200 whose answer ends
      with it;
    - ``trickle-body``: a 200 whose body comes one byte every half second, never ending;
    - ``trickle-headers``: the status line, then the headers one byte every half second;
    - ``retry-after=VALUE``: the first request is a 429 with ``Retry-After: VALUE``
      (``date+N``: an HTTP date N seconds ahead), later ones answer;
    - ``always-429=VALUE``: every request is a 429 with ``Retry-After: VALUE``.

    ``arrivals`` holds each completion request's arrival (``time.monotonic()``) and
    ``authorization`` the ``Authorization`` headers received.
    """

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.arrivals: list[float] = []
        self.authorization: list[str] = []
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        fake, server = FakeBackend(), self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any], **headers: str) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name.replace("_", "-"), value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                models = [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "t"}]
                self._send(200, {"object": "list", "data": models})

            def _drip(self, data: bytes) -> None:
                for byte in data:
                    if server._stopped.wait(0.5):
                        return
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                auth = self.headers.get("Authorization", "")
                with server._lock:
                    server.arrivals.append(time.monotonic())
                    server.authorization.append(auth)
                    n = len(server.arrivals)
                mode, _, value = server.mode.partition("=")
                try:
                    if mode == "trickle-body":
                        self.send_response(200)
                        self.send_header("Content-Length", "100000")
                        self.end_headers()
                        self._drip(b" " * 100000)
                        return
                    if mode == "trickle-headers":
                        self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                        self._drip(b"X-Slow: " + b"a" * 100000)
                        return
                    if mode == "always-429" or (mode == "retry-after" and n == 1):
                        if value.startswith("date+"):
                            value = formatdate(time.time() + float(value[5:]), usegmt=True)
                        self._send(429, {"error": {"message": "slow down"}}, Retry_After=value)
                        return
                    if mode == "echo" and n % 2:
                        message = f"invalid credentials: Authorization: {auth}"
                        self._send(401, {"error": {"message": message, "type": "auth"}})
                        return
                    gen = fake.generate(body["prompt"], max_tokens=body.get("max_tokens", 16),
                                        stop=body.get("stop") or ())  # fmt: skip
                    text = gen.text + (f" (you sent {auth})" if mode == "echo" else "")
                    self._send(200, {
                        "id": "x", "object": "text_completion", "created": 0, "model": MODEL_ID,
                        "choices": [{"index": 0, "text": text, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    })  # fmt: skip
                except OSError:  # the client went away
                    return

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def __enter__(self) -> EvilServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def openai_run(toy: pytest.Pytester, url: str, *args: str) -> tuple[Any, dict, float]:
    """Run the toy suite against ``url``; (result, record or {}, seconds)."""
    record = toy.path / "openai.json"
    start = time.monotonic()
    result = toy.runpytest_subprocess(
        "--backend", "openai", "--base-url", url, "--model-name", MODEL_ID,
        "--data-dir", "data", "--report-json", str(record), *args, *chat_unless_given(args),
        timeout=RUN_LIMIT_S,
    )  # fmt: skip
    elapsed = time.monotonic() - start
    return result, (read_json(record) if record.exists() else {}), elapsed


# ---------------------------------------------------------------- echoed credentials


def _userinfo_url(url: str) -> str:
    return url.replace("http://", f"http://alice:{PLANTED_PASSWORD}@")


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("credential", ["api-key", "url-basic-auth"])
def test_a_server_echoing_the_credentials_gets_them_into_no_output(
    toy, mode, credential, monkeypatch
):
    """The server echoes the Authorization header (Bearer key, or the Basic value httpx
    derives from ``user:pass@`` in --base-url) in 401 bodies and in answers: the record,
    JUnit, HTML, markdown, CTRF, the Every Eval Ever export, the generation cache and the
    terminal hold neither the key, nor the password, nor the Basic value."""
    require_installed("pytest_html")
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED_KEY)
    with EvilServer("echo") as server:
        url = _userinfo_url(server.url) if credential == "url-basic-auth" else server.url
        result, record, _ = openai_run(
            toy, url, "--limit", "6", "--max-retries", "0", "--max-failures", "100",
            "--cache-dir", "cache", "--junitxml", "junit.xml", "--html", "report.html",
            "--summary-md", "summary.md", "--ctrf", "ctrf.json",
            "--export", "every-eval-ever=eee", *mode,
        )  # fmt: skip
    sent = set(server.authorization)
    pair = f"alice:{PLANTED_PASSWORD.replace('%2F', '/')}"
    basic = base64.b64encode(pair.encode()).decode()
    planted = {
        "api-key": [PLANTED_KEY],
        "url-basic-auth": [PLANTED_KEY, PLANTED_PASSWORD, pair, basic],
    }[credential]
    assert any(p in a for a in sent for p in planted), sent  # the server did see a secret
    assert result.ret == 1, result.stdout.str()[-3000:]  # the 401 items failed
    errors = [it["error"] for it in record["items"] if it.get("error")]
    assert errors and all("HTTP 401: " in e and "Authorization: " in e for e in errors)
    assert all("***" in e for e in errors), errors
    texts = [c["text"] for it in record["items"] for c in it["calls"]]
    assert texts and all("(you sent " in t and "***)" in t for t in texts), texts
    written = [p for p in toy.path.rglob("*") if p.is_file() and p.suffix != ".py"]
    names = {p.name for p in written}
    assert {"openai.json", "junit.xml", "report.html", "summary.md", "ctrf.json"} <= names
    assert (toy.path / "cache" / "cache.sqlite").is_file()
    assert any("eee" in p.relative_to(toy.path).parts for p in written)
    outputs = {"stdout": result.stdout.str(), "stderr": result.stderr.str()}
    outputs.update({str(p): p.read_bytes().decode("latin-1") for p in written})
    leaks = [(where, p) for where, text in outputs.items() for p in planted if p in text]
    assert not leaks, leaks
    assert "Traceback" not in outputs["stdout"] + outputs["stderr"]


# ---------------------------------------------------------------- the whole-request deadline


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fault", ["trickle-body", "trickle-headers"])
def test_a_trickling_server_is_cut_at_the_request_timeout(toy, mode, fault):
    """One byte every half second never trips a per-read timeout; --request-timeout 3 is
    the whole request, so every request fails after 3 s, the circuit breaker stops the
    run (exit 1), and the run ends long before a trickle of 100,000 bytes would."""
    with EvilServer(fault) as server:
        result, record, elapsed = openai_run(
            toy, server.url, "--request-timeout", "3", "--max-retries", "0",
            "--max-failures", "2", "--limit", "4", "--no-cache", *mode,
        )  # fmt: skip
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 1, out[-3000:]
    assert record["complete"] is False
    assert "APITimeoutError: no complete answer within 3 s" in record["stopped"], record["stopped"]
    assert "Traceback" not in out
    # each worker stops after 2 requests of 3 s (plus those already in flight)
    assert elapsed < RUN_LIMIT_S and len(server.arrivals) <= 2 * 4


def test_the_deadline_bounds_a_request_not_each_read():
    """The client alone: a trickled body fails within the deadline plus one read's wait."""
    import openai

    from extractbench.fixtures.models.openai.http_client import openai_client

    with EvilServer("trickle-body") as server:
        client = openai_client(server.url, 1.5, 0)
        start = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            client.completions.create(model=MODEL_ID, prompt="x", max_tokens=1)
        elapsed = time.monotonic() - start
    assert 1.4 < elapsed < 1.5 + 2  # one read of the trickle waits at most 0.5 s


# ---------------------------------------------------------------- Retry-After


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("retry_after", ["3", "date+4"], ids=["seconds", "http-date"])
def test_a_429_is_retried_after_its_retry_after(toy, mode, retry_after):
    """The first request gets a 429 asking for a wait of 3 s (or an HTTP date 4 s ahead,
    which whole seconds make at least 3 s): the retry comes no sooner, and the run passes."""
    with EvilServer(f"retry-after={retry_after}") as server:
        result, record, _ = openai_run(
            toy, server.url, "--limit", "1", "--max-retries", "2", "--no-cache", *mode
        )
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert record["counts"]["scored"] == 1 and len(server.arrivals) == 2
    assert server.arrivals[1] - server.arrivals[0] >= 2.9


@pytest.mark.parametrize("mode", MODES)
def test_a_retry_after_beyond_the_cap_fails_the_request_at_once(toy, mode):
    """A 429 asking for an hour is not retried (a retry sooner would be refused): the
    item fails at once naming the wait, and the run exits 1."""
    with EvilServer("always-429=3600") as server:
        result, record, elapsed = openai_run(
            toy, server.url, "--limit", "1", "--max-retries", "3", "--no-cache", *mode
        )
    assert result.ret == 1, result.stdout.str()[-3000:]
    assert len(server.arrivals) == 1
    (error,) = [it["error"] for it in record["items"]]
    assert "HTTP 429" in error and "retry after 3600 s (Retry-After)" in error
    assert "not retried" in error and elapsed < RUN_LIMIT_S


def test_retry_after_is_read_as_seconds_milliseconds_or_an_http_date():
    from extractbench.fixtures.models.openai.retry_after import (
        RETRY_AFTER_CAP_S,
        retry_after_s,
        retry_wait,
    )

    assert retry_after_s({"Retry-After": "7"}) == 7.0
    assert retry_after_s({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_s({"Retry-After": formatdate(1000.0, usegmt=True)}, now=990.0) == 10.0
    assert retry_after_s({"Retry-After": formatdate(1000.0, usegmt=True)}, now=2000.0) == 0.0
    for unreadable in ({}, {"Retry-After": "soon"}, {"Retry-After": "-3"}, {"Retry-After": "nan"}):
        assert retry_after_s(unreadable) is None
    assert retry_wait(None, 2, 0.5, 300)[0] == 2.0  # backoff without the header
    assert retry_wait({"Retry-After": "0"}, 2, 0.5, 300)[0] == 0.0
    assert retry_wait({"Retry-After": str(RETRY_AFTER_CAP_S + 1)}, 0, 0.5, 300)[0] is None
    assert retry_wait({"Retry-After": "20"}, 0, 0.5, 10)[0] is None  # capped by the timeout


# ---------------------------------------------------------------- what redaction masks


def test_every_form_of_a_known_secret_is_masked(monkeypatch):
    from extractbench.fixtures.models import redact

    monkeypatch.setattr(redact, "_SECRETS", set())
    monkeypatch.setenv("OPENAI_API_KEY", "not-needed")
    redact.add_url_secrets("http://bob:s3cret%22pass@host/v1?api_key=QUERYTOKEN1")
    redact.add_header_secrets([("Authorization", "Bearer tok-ABCDEFGH"), ("Host", "host:80"),
                               ("X-Stainless-Lang", "python"), ("Cookie", "sid=abcdefgh")])  # fmt: skip
    basic = base64.b64encode(b'bob:s3cret"pass').decode()
    text = (f'{basic} s3cret"pass s3cret\\"pass s3cret&quot;pass s3cret%22pass tok-ABCDEFGH '
            "QUERYTOKEN1 sid=abcdefgh python host:80 not-needed")  # fmt: skip
    assert redact.redact_secrets(text) == "*** " * 8 + "python host:80 not-needed"
    redact.add_secret("short")  # too short to tell from a word: masked only as a credential
    assert redact.redact_secrets("a short answer") == "a short answer"
    assert redact.redact_json({"k": [f"x {basic}"]}) == {"k": ["x ***"]}


def test_a_secret_in_a_failed_tests_report_is_masked_on_the_terminal(toy, monkeypatch):
    """A plain test beside the suite whose failure prints the key: the terminal shows it
    masked (the report pytest prints is redacted)."""
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED_KEY)
    toy.makepyfile(test_other="import os\n\ndef test_other():\n"
                   "    assert os.environ['OPENAI_API_KEY'] == 'x'\n")  # fmt: skip
    result = toy.runpytest_subprocess("--backend", "fake", "--data-dir", "data", "--limit", "2")
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 1 and "test_other" in out and "***" in out
    written = [p for p in toy.path.rglob("*") if p.is_file() and p.suffix != ".py"]
    assert written and not [p for p in written if PLANTED_KEY in p.read_text("latin-1")]
    assert PLANTED_KEY not in out
