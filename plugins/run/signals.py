"""Ctrl-C (SIGINT) and SIGTERM (a timeout, a CI cancellation, Kubernetes) in the process
that aggregates the run: the first ends the run, every later one is absorbed (then
ignored) until the process exits, so a second Ctrl-C never breaks off the shutdown that writes the record."""

from __future__ import annotations

import signal
import threading
from typing import Any

__all__ = ["StopSignals"]

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    """The run's handler of SIGINT and SIGTERM (installed only in the main thread).

    Attributes:
        received: the first signal's name (``"SIGINT"``, ``"SIGTERM"``), None before one.
        finishing: set when the outputs are being written: a first signal then is
            recorded and absorbed too.
    """

    def __init__(self) -> None:
        self.received: str | None = None
        self.finishing = False
        self._previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self._on_signal) for sig in SIGNALS}

    def _on_signal(self, signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if self.received is not None or self.finishing:
            self.received = self.received or name
            return
        self.received = name
        raise KeyboardInterrupt(name)

    def release(self) -> None:
        """The handlers pytest had before the run; once a signal has ended the run, both
        signals ignored instead until the process exits: pytest's own teardown after the
        plugins' (a garbage collection) and the interpreter's shutdown, which sets a Python
        handler back to the default, would otherwise let a second Ctrl-C end the finished
        run with a traceback or by the signal."""
        for sig, handler in self._previous.items():
            signal.signal(sig, handler if self.received is None else signal.SIG_IGN)
        self._previous = {}
