"""A small OpenAI-compatible HTTP server for tests: answers like the fake backend.

``GET /v1/models``, ``POST /v1/completions`` and ``POST /v1/chat/completions``; the first
``fail_first`` completion requests get a 503 (then 429) answer with ``Retry-After: 0`` so
the client's retries are exercised. ``fault`` makes every completion misbehave: ``500``
(an HTTP 500), ``hang`` (no answer for 30 s), ``huge`` (a 1 MB answer), ``badjson``,
``nonutf8``, ``nochoices``, ``nulltext``, ``badusage``. ``latency_s`` delays every
completion; after ``fault_after`` completions every request gets a 503 (a dying server); ``max_in_flight`` counts the completions answered at once. Runs in threads of
the test process.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fixtures.models.fake import FakeBackend

MODEL_ID = "fake-served"
_OK = {"id": "x", "object": "text_completion", "created": 0, "model": MODEL_ID}
BROKEN_BODIES: dict[str, bytes] = {
    "badjson": b'{"choices": [{"text": "unterminated',
    "nonutf8": b'{"choices": [{"text": "\xff\xfe"}]}',
    "nochoices": json.dumps({**_OK, "choices": []}).encode(),
    "nulltext": json.dumps({**_OK, "choices": [{"index": 0, "text": None}]}).encode(),
    "badusage": json.dumps({**_OK, "choices": [{"index": 0, "text": "x"}],
                            "usage": {"prompt_tokens": "many", "completion_tokens": -1}}).encode(),
}  # fmt: skip


class FakeOpenAIServer:
    """Start with :meth:`start`, stop with :meth:`stop`; ``url`` ends in ``/v1``."""

    def __init__(
        self,
        fail_first: int = 0,
        fault: str | None = None,
        latency_s: float = 0.0,
        fault_after: int | None = None,
    ) -> None:
        self.fail_first = fail_first
        self.fault_after = fault_after  # after this many completions every one answers 503
        self.fault = fault
        self.latency_s = latency_s  # each completion waits this long (a busy server)
        self.in_flight = 0
        self.max_in_flight = 0  # completion requests being answered at once, at most
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._fake = FakeBackend()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: dict[str, Any] | bytes) -> None:
                self._leave()  # answered: no longer in flight, before the client can go on
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/") == "/v1/models":
                    self._send(200, {"object": "list", "data": [
                        {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "tests"}
                    ]})  # fmt: skip
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def _leave(self) -> None:
                with server._lock:
                    if getattr(self, "_in_flight", False):
                        self._in_flight = False
                        server.in_flight -= 1

            def do_POST(self) -> None:  # noqa: N802
                with server._lock:
                    self._in_flight = True
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if server.latency_s:
                        time.sleep(server.latency_s)
                    self._answer()
                finally:
                    self._leave()

            def _answer(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server._lock:
                    server.requests.append({"path": self.path, **body})
                    failing = len(server.requests) <= server.fail_first
                    dead = (
                        server.fault_after is not None and len(server.requests) > server.fault_after
                    )
                if dead:
                    self._send(
                        503, {"error": {"message": "server going away", "type": "unavailable"}}
                    )
                    return
                if failing:
                    status = 503 if len(server.requests) % 2 else 429
                    self._send(status, {"error": {"message": "busy", "type": "overloaded"}})
                    return
                if server.fault == "500":
                    self._send(500, {"error": {"message": "internal error", "type": "server"}})
                    return
                if server.fault == "hang":
                    time.sleep(30)
                    return
                if server.fault in BROKEN_BODIES:
                    self._send(200, BROKEN_BODIES[server.fault])
                    return
                if body.get("model") != MODEL_ID:
                    self._send(404, {"error": {"message": f"model {body.get('model')} not found"}})
                    return
                chat = self.path.endswith("/chat/completions")
                prompt = body["messages"][-1]["content"] if chat else body["prompt"]
                gen = server._fake.generate(
                    prompt, max_tokens=body.get("max_tokens", 16), stop=body.get("stop") or ()
                )
                if server.fault == "huge":  # a server that ignores max_tokens
                    gen = type(gen)("x" * 1_000_000, gen.prompt_tokens, 250_000, 0.0)
                choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
                if chat:
                    choice["message"] = {"role": "assistant", "content": gen.text}
                else:
                    choice["text"] = gen.text
                self._send(200, {
                    "id": "x", "object": "chat.completion" if chat else "text_completion",
                    "created": 0, "model": MODEL_ID, "choices": [choice],
                    "usage": {"prompt_tokens": gen.prompt_tokens,
                              "completion_tokens": gen.completion_tokens,
                              "total_tokens": gen.prompt_tokens + gen.completion_tokens},
                })  # fmt: skip

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
