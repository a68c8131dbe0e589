"""Progress lines of a long run: per suite, items done / total, items/s, generated tokens/s
and an ETA, at most every N seconds (``--progress N``) and when a suite ends.

Fed by the aggregating process (the xdist controller, or the only process) from every
item's report (:meth:`Progress.item`), so one set of lines covers all workers. The rates
are the suite's own since its first item started (the first report's time less that
item's duration); the ETA is the items left at that rate. Generated tokens are every model
call's ``completion_tokens`` (judge calls included), from the cache or not.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Progress", "SuiteProgress", "duration_text"]


def duration_text(seconds: float) -> str:
    """``3725`` -> ``1 h 2 min``; ``125`` -> ``2 min 5 s``; ``7.25`` -> ``7.2 s``."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {secs} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"


@dataclass
class SuiteProgress:
    """One suite's items so far (ids counted once), failures, generated tokens, and when
    its first item started (``time.monotonic`` seconds)."""

    started: float
    done: set[str] = field(default_factory=set)
    failed: int = 0
    generated_tokens: int = 0
    finished: bool = False

    def line(self, name: str, total: int | None, now: float) -> str:
        """The progress line of this suite at ``now``."""
        elapsed = max(now - self.started, 1e-9)
        done = len(self.done)
        rate, tokens = done / elapsed, self.generated_tokens / elapsed
        failed = f", {self.failed} failed" if self.failed else ""
        if self.finished:
            return (
                f"{name} done: {done:,} items in {duration_text(elapsed)}{failed}, "
                f"{rate:.2f} items/s, {tokens:.1f} generated tokens/s"
            )
        if total:
            left = max(total - done, 0)
            eta = duration_text(left / rate) if rate > 0 else "unknown"
            head = f"{name} {done:,}/{total:,} items ({100 * done / total:.0f}%)"
        else:
            eta, head = "unknown", f"{name} {done:,} items"
        return f"{head}{failed}, {rate:.2f} items/s, {tokens:.1f} generated tokens/s, ETA {eta}"


class Progress:
    """Progress of a run's suites (see the module docstring).

    Args:
        every_s: least seconds between two periodic lines (0: no lines at all).
        write: prints one line (the terminal reporter's ``write_line``).
        clock: seconds, monotonic (tests pass their own).
    """

    def __init__(
        self,
        every_s: float,
        write: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.every_s, self.write, self.clock = every_s, write, clock
        self.suites: dict[str, SuiteProgress] = {}
        self.last = clock()

    def item(
        self, entry: Mapping[str, Any], duration_s: float, totals: Mapping[str, int | None]
    ) -> None:
        """Count one finished item and print what is due.

        Args:
            entry: the item's record entry (``id``, ``suite``, ``outcome``, ``calls``,
                ``tokens``).
            duration_s: how long its test took (its report's duration).
            totals: suite -> items selected (None while unknown).
        """
        if self.every_s <= 0:
            return
        now = self.clock()
        suite = str(entry.get("suite", "?"))
        state = self.suites.get(suite)
        if state is None:
            state = self.suites[suite] = SuiteProgress(started=now - max(duration_s, 0.0))
        if entry["id"] in state.done:
            return
        state.done.add(entry["id"])
        state.failed += entry.get("outcome") == "failed"
        calls = entry.get("calls") or []
        state.generated_tokens += (
            sum(int(c.get("completion_tokens", 0)) for c in calls)
            if calls
            else int((entry.get("tokens") or {}).get("completion", 0))
        )
        total = totals.get(suite)
        if total and len(state.done) >= total and not state.finished:
            state.finished = True
            self.write(f"extractbench progress: {state.line(suite, total, now)}")
        if now - self.last >= self.every_s:
            self.last = now
            for name, other in self.suites.items():
                if not other.finished:
                    self.write(f"extractbench progress: {other.line(name, totals.get(name), now)}")
