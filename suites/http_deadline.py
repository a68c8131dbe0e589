"""A total deadline for an HTTP request made with ``httpx`` (or ``httpx2``), from opening
the connection to its last byte.

The HTTP libraries' timeouts are per operation: a read that waits longer than the timeout
fails, but a server that sends one byte every half second never trips it, and a request
could last for ever. Within :func:`request_deadline`, every network operation (connect,
TLS, each write, each read) of a client whose pools :func:`keep_deadlines` wrapped may
only wait until the deadline; once it has passed, the next operation fails with the
library's timeout error. So a request ends at most one operation's latency after it. The
model servers' client (``--request-timeout``) and the data fetch use it.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["request_deadline", "keep_deadlines", "DeadlineUnsupported", "http_library"]


def http_library() -> Any:
    """The ``httpx`` API the installed ``openai`` client is built on: ``httpx2`` (openai 3)
    or ``httpx`` (earlier releases); both are the same API under two names.

    Raises:
        ImportError: neither is installed.
    """
    try:
        return importlib.import_module("httpx2")
    except ImportError:
        return importlib.import_module("httpx")


class DeadlineUnsupported(RuntimeError):
    """The HTTP library's connection pool has no network backend to wrap."""


# the running request's deadline (time.monotonic()); None outside a request
_DEADLINE: ContextVar[float | None] = ContextVar("request_deadline", default=None)


@contextmanager
def request_deadline(seconds: float) -> Iterator[None]:
    """Within the block, every network operation of a client made by
    :func:`openai_client` ends by ``seconds`` from now (nested blocks keep the earlier)."""
    outer = _DEADLINE.get()
    deadline = time.monotonic() + seconds
    token = _DEADLINE.set(deadline if outer is None else min(outer, deadline))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


class _Deadline:
    """Clamps a network operation's timeout to the time left before the deadline."""

    def __init__(self, library: Any) -> None:
        self.library = library  # httpcore or httpcore2: its timeout exceptions

    def left(self, timeout: float | None, error: str) -> float | None:
        deadline = _DEADLINE.get()
        if deadline is None:
            return timeout
        left = deadline - time.monotonic()
        if left <= 0:
            raise getattr(self.library, error)("the request's total deadline passed")
        return left if timeout is None else min(timeout, left)


class _Stream:
    """A network stream whose every read and write ends by the request's deadline."""

    def __init__(self, stream: Any, clock: _Deadline) -> None:
        self._stream, self._clock = stream, clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, self._clock.left(timeout, "ReadTimeout"))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._clock.left(timeout, "WriteTimeout"))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> _Stream:  # fmt: skip
        left = self._clock.left(timeout, "ConnectTimeout")
        return _Stream(self._stream.start_tls(ssl_context, server_hostname, left), self._clock)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend:
    """A connection pool's network backend whose connections keep the deadline."""

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self._clock = _Deadline(importlib.import_module(type(backend).__module__.split(".")[0]))

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None, socket_options: Any = None) -> _Stream:  # fmt: skip
        left = self._clock.left(timeout, "ConnectTimeout")
        stream = self._backend.connect_tcp(host, port, left, local_address, socket_options)
        return _Stream(stream, self._clock)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> _Stream:  # fmt: skip
        left = self._clock.left(timeout, "ConnectTimeout")
        return _Stream(self._backend.connect_unix_socket(path, left, socket_options), self._clock)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def keep_deadlines(client: Any) -> Any:
    """Wrap the network backend of every connection pool of the ``httpx`` client ``client``
    so that its requests keep :func:`request_deadline`; returns ``client``.

    Raises:
        DeadlineUnsupported: a transport's pool has no network backend to wrap (another
            version of the HTTP library), naming its module.
    """
    for transport in (client._transport, *client._mounts.values()):
        pool = getattr(transport, "_pool", None)
        if transport is not None and not hasattr(pool, "_network_backend"):
            raise DeadlineUnsupported(type(transport).__module__)
        if pool is not None:
            pool._network_backend = _Backend(pool._network_backend)
    return client
