"""A small OpenAI-compatible HTTP server for tests: answers like the fake backend.

``GET /v1/models``, ``POST /v1/completions`` and ``POST /v1/chat/completions``; the first
``fail_first`` completion requests get a 503 (then 429) answer with ``Retry-After: 0`` so
the client's retries are exercised. ``fault`` makes every completion misbehave: ``500``
(an HTTP 500), ``hang`` (no answer for ``hang_s`` seconds, 30 by default, or until
:meth:`FakeOpenAIServer.stop`), ``trickle`` (a 200 whose body comes one byte every half
second and never ends: no read timeout fires), ``huge`` (a 1 MB answer), ``badjson``,
``nonutf8``, ``nochoices``, ``nulltext``, ``badusage``. ``latency_s`` delays every
completion; after ``fault_after`` completions every request gets a 503 (a dying server);
``max_in_flight`` counts the completions answered at once. Runs in threads of the test
process.

It can also describe itself as the real servers do (the generation cache keys on it):
``flavour="llama-server"`` answers ``GET /props`` (``model_path``, ``build_info``,
``total_slots``, ``chat_template``, ``default_generation_settings.n_ctx``) and gives its
``/v1/models`` entry llama-server's ``meta`` (ggml-org/llama.cpp tools/server/README.md);
``flavour="vllm"`` gives the entry vLLM's ``root``, ``parent`` and ``max_model_len`` and
answers ``GET /version``. ``props`` and ``card`` override those fields (another build,
another quantisation behind the same model name; ``port`` gives it the URL of a server
stopped before). Plain (``flavour=None``): neither.

As llama-server (``--jinja``) does, ``flavour="llama-server"`` renders each chat request's
messages with the ``chat_template`` it reports, and answers a template's error (``System
role not supported``) with an HTTP 500 naming it.

``reply`` rewrites each chat answer: ``reply(user message, answer) -> text`` (a reasoning
model's ``reasoning...</think>answer``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from extractbench.fixtures.models.fake.backend import FakeBackend

MODEL_ID = "fake-served"


def chat_unless_given(args) -> tuple[str, ...]:
    """``--chat off`` unless ``args`` choose: a server that does not report its model's
    template makes ``--chat auto`` stop and ask (fixtures/models/chat.py)."""
    return () if "--chat" in args else ("--chat", "off")


_OK = {"id": "x", "object": "text_completion", "created": 0, "model": MODEL_ID}
BROKEN_BODIES: dict[str, bytes] = {
    "badjson": b'{"choices": [{"text": "unterminated',
    "nonutf8": b'{"choices": [{"text": "\xff\xfe"}]}',
    "nochoices": json.dumps({**_OK, "choices": []}).encode(),
    "nulltext": json.dumps({**_OK, "choices": [{"index": 0, "text": None}]}).encode(),
    "badusage": json.dumps({**_OK, "choices": [{"index": 0, "text": "x"}],
                            "usage": {"prompt_tokens": "many", "completion_tokens": -1}}).encode(),
}  # fmt: skip


# What llama-server and vLLM report about themselves (shapes of their documented answers):
# (GET /props, fields of the /v1/models entry).
_FLAVOURS: dict[str | None, tuple[dict[str, Any], dict[str, Any]]] = {
    "llama-server": (
        {
            "default_generation_settings": {"id": 0, "n_ctx": 4096, "params": {"seed": 0}},
            "total_slots": 1,
            "model_path": "/models/gemma-3-270m-it-Q4_K_M.gguf",
            "chat_template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}",
            "modalities": {"vision": False},
            "build_info": "b6500-0123abcd",
        },
        {"owned_by": "llamacpp", "meta": {"vocab_type": 1, "n_vocab": 262144,
                                          "n_ctx_train": 32768, "n_embd": 640,
                                          "n_params": 268098176, "size": 253231104}},
    ),
    "vllm": (
        {"version": "0.6.3"},
        {"owned_by": "vllm", "root": "google/gemma-3-270m-it", "parent": None,
         "max_model_len": 32768},
    ),
}  # fmt: skip


def _render(template: str, messages: list[dict[str, Any]]) -> str:
    """``messages`` through a Jinja chat template, as a server renders them."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise ValueError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    return env.from_string(template).render(
        messages=messages, add_generation_prompt=True, bos_token="", eos_token=""
    )


class FakeOpenAIServer:
    """Start with :meth:`start`, stop with :meth:`stop`; ``url`` ends in ``/v1``."""

    def __init__(
        self,
        fail_first: int = 0,
        fault: str | None = None,
        latency_s: float = 0.0,
        fault_after: int | None = None,
        hang_s: float = 30.0,
        flavour: str | None = None,
        props: dict[str, Any] | None = None,
        card: dict[str, Any] | None = None,
        port: int = 0,
        reply: Callable[[str, str], str] | None = None,
    ) -> None:
        self.reply = reply
        self.fail_first = fail_first
        self.hang_s = hang_s
        self.flavour = flavour
        self.props = {**_FLAVOURS.get(flavour, ({}, {}))[0], **(props or {})}
        self.card = {**_FLAVOURS.get(flavour, ({}, {}))[1], **(card or {})}
        self.gets: list[str] = []  # paths of the GET requests, in order
        self._stopped = threading.Event()
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
                path = self.path.split("?", 1)[0].rstrip("/")
                with server._lock:
                    server.gets.append(self.path)
                if path == "/v1/models":
                    self._send(200, {"object": "list", "data": [
                        {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "tests",
                         **server.card}
                    ]})  # fmt: skip
                elif path == "/props" and server.flavour == "llama-server":
                    self._send(200, server.props)
                elif path == "/version" and server.flavour == "vllm":
                    self._send(200, {"version": server.props.get("version", "0.6.3")})
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
                    server._stopped.wait(server.hang_s)
                    return
                if server.fault == "trickle":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "1000000")
                    self.end_headers()
                    while not server._stopped.wait(0.5):
                        try:
                            self.wfile.write(b" ")
                            self.wfile.flush()
                        except OSError:  # the client went away
                            return
                    return
                if server.fault in BROKEN_BODIES:
                    self._send(200, BROKEN_BODIES[server.fault])
                    return
                if body.get("model") != MODEL_ID:
                    self._send(404, {"error": {"message": f"model {body.get('model')} not found"}})
                    return
                chat = self.path.endswith("/chat/completions")
                template = server.props.get("chat_template") if server.flavour else None
                if chat and template:
                    try:
                        _render(template, body["messages"])
                    except Exception as exc:  # llama-server: the template's error, HTTP 500
                        self._send(500, {"error": {"code": 500, "message": str(exc),
                                                   "type": "server_error"}})  # fmt: skip
                        return
                prompt = body["messages"][-1]["content"] if chat else body["prompt"]
                gen = server._fake.generate(
                    prompt, max_tokens=body.get("max_tokens", 16), stop=body.get("stop") or ()
                )
                if server.fault == "huge":  # a server that ignores max_tokens
                    gen = type(gen)("x" * 1_000_000, gen.prompt_tokens, 250_000, 0.0)
                choice: dict[str, Any] = {"index": 0, "finish_reason": "stop"}
                if chat:
                    text = server.reply(prompt, gen.text) if server.reply else gen.text
                    choice["message"] = {"role": "assistant", "content": text}
                else:
                    choice["text"] = gen.text
                self._send(200, {
                    "id": "x", "object": "chat.completion" if chat else "text_completion",
                    "created": 0, "model": MODEL_ID, "choices": [choice],
                    "usage": {"prompt_tokens": gen.prompt_tokens,
                              "completion_tokens": gen.completion_tokens,
                              "total_tokens": gen.prompt_tokens + gen.completion_tokens},
                })  # fmt: skip

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)  # 0: any free port
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def start(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopped.set()  # hung and trickling answers end
        self._httpd.shutdown()
        self._httpd.server_close()
