"""Progress lines of a long run: per suite, items done / total, items/s, generated tokens/s
and an ETA; the whole run's items and ETA; the item running longest. A line when a suite's
first item ends and when a suite ends, and the lot at least every N seconds
(``--progress N``) while the run goes on, items ending or not (:meth:`Progress.tick`,
called by a timer, so a MINEA item iterating for minutes still gets its lines); events
(collection, a model loaded) as they come.

Fed by the aggregating process (the xdist controller, or the only process) from every
item's start and report, so one set of lines covers all workers. A suite's rates are its
own since its first item started (the first report's time less that item's duration), its
ETA the items left at that rate; the run's ETA is the items left of every suite whose total
is known, at the run's rate since its first item started. Generated tokens are every
model call's ``completion_tokens`` (judge calls included), from the cache or not.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Heartbeat", "Progress", "SuiteProgress", "duration_text", "COLLECTING_S"]

COLLECTING_S = 10.0  # a collection running this long gets its first progress line


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
        self.running: dict[str, float] = {}  # node id -> when it started
        self.totals: Mapping[str, int | None] = {}
        self.last = clock()
        self.first_start: float | None = None
        self.collecting: float | None = None  # when collection began; None once it ended
        self._collect_said: float | None = None
        self.lock = threading.RLock()  # item() in the main thread, tick() in a timer's

    def _say(self, text: str) -> None:
        self.write(f"extractbench progress: {text}")

    def event(self, text: str) -> None:
        """Print one event line now (collection done, a model loaded)."""
        if self.every_s > 0:
            with self.lock:
                self._say(text)

    def started(self, nodeid: str) -> None:
        """An item started (its ``pytest_runtest_logstart``)."""
        with self.lock:
            now = self.clock()
            self.running.setdefault(nodeid, now)
            if self.first_start is None:
                self.first_start = now

    def item(
        self, entry: Mapping[str, Any], duration_s: float, totals: Mapping[str, int | None],
        nodeid: str | None = None,
    ) -> None:  # fmt: skip
        """Count one finished item and print what is due.

        Args:
            entry: the item's record entry (``id``, ``suite``, ``outcome``, ``calls``,
                ``tokens``).
            duration_s: how long its test took (its report's duration).
            totals: suite -> items selected (None while unknown).
            nodeid: its node id (no longer running).
        """
        if self.every_s <= 0:
            return
        with self.lock:
            self._item(entry, duration_s, totals, nodeid)

    def expect(self, nodeids: Iterable[str], suites: Collection[str]) -> None:
        """Each suite's total from the node ids a worker collected (``test_x[SUITE/...]``),
        so the run's line counts suites none of whose items has ended yet; totals that the
        items' reports bring later (shards, deselection) replace these."""
        counts: dict[str, int] = {}
        for nodeid in nodeids:
            param = nodeid.partition("[")[2]
            if (suite := param.partition("/")[0]) in suites:
                counts[suite] = counts.get(suite, 0) + 1
        with self.lock:
            self.totals = {**counts, **{k: v for k, v in self.totals.items() if v}}

    def _item(self, entry, duration_s, totals, nodeid) -> None:  # noqa: ANN001
        now = self.clock()
        self.totals = {**self.totals, **{k: v for k, v in totals.items() if v is not None}}
        self.running.pop(nodeid or "", None)
        suite = str(entry.get("suite", "?"))
        state = self.suites.get(suite)
        first = state is None
        if state is None:
            state = self.suites[suite] = SuiteProgress(started=now - max(duration_s, 0.0))
            if self.first_start is None or state.started < self.first_start:
                self.first_start = state.started
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
            self._say(state.line(suite, total, now))
        elif first:
            self._say(state.line(suite, total, now))
        if now - self.last >= self.every_s:
            self._lines(now)

    def tick(self) -> None:
        """Print every unfinished suite's line, the run's and the longest-running item's
        when ``every_s`` passed since the last lines (a timer calls this)."""
        if self.every_s <= 0:
            return
        with self.lock:
            now = self.clock()
            if self.collecting is not None:
                self._collecting(now)
            elif now - self.last >= self.every_s:
                self._lines(now)

    def collection(self, started: bool) -> None:
        """Collection began (``started``) or ended: while it lasts, a line once it has
        taken :data:`COLLECTING_S` seconds, then every ``every_s`` (a large data file
        would otherwise keep the terminal silent for minutes)."""
        with self.lock:
            self.collecting = self.clock() if started else None
            self._collect_said = None

    def _collecting(self, now: float) -> None:
        assert self.collecting is not None
        waited = now - self.collecting
        said = self._collect_said
        if (said is None and waited >= COLLECTING_S) or (
            said is not None and now - said >= self.every_s
        ):
            self._collect_said = now
            self._say(f"collecting the selected suites' items: {duration_text(waited)} so far")

    def _lines(self, now: float) -> None:
        self.last = now
        for name, other in self.suites.items():
            if not other.finished:
                self._say(other.line(name, self.totals.get(name), now))
        overall = self.overall(now)
        if overall:
            self._say(overall)

    def overall(self, now: float) -> str:
        """The run's line: items done of the known totals, the run's rate, its ETA, and
        the item running longest ('' before anything started)."""
        if self.first_start is None:
            return ""
        done = sum(len(s.done) for s in self.suites.values())
        known = {n: t for n, t in self.totals.items() if t}
        total = sum(known.values())
        elapsed = max(now - self.first_start, 1e-9)
        rate = done / elapsed
        parts = [f"run: {done:,} items in {duration_text(elapsed)}"]
        if total:
            left = sum(max(t - len(self.suites[n].done) if n in self.suites else t, 0)
                       for n, t in known.items())  # fmt: skip
            eta = duration_text(left / rate) if rate > 0 else "unknown"
            parts = [f"run: {done:,}/{total:,} items of {len(known)} suite(s)",
                     f"{duration_text(elapsed)} so far", f"ETA {eta}"]  # fmt: skip
        if self.running:
            nodeid, since = min(self.running.items(), key=lambda kv: kv[1])
            if "]@" in nodeid:  # xdist's loadgroup suffix: test[ID]@GROUP
                nodeid = nodeid[: nodeid.rindex("]@") + 1]
            name = nodeid.split("[", 1)[-1].rstrip("]") if "[" in nodeid else nodeid
            parts.append(
                f"{len(self.running)} running, longest {name} for {duration_text(now - since)}"
            )
        return ", ".join(parts)


class Heartbeat:
    """A daemon thread calling :meth:`Progress.tick` every second (every ``every_s`` when
    shorter, at least every 0.2 s) until :meth:`stop`."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="extractbench-progress", daemon=True)

    def start(self) -> Heartbeat:
        """Start ticking (nothing when progress lines are off)."""
        if self.progress.every_s > 0:
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(max(0.2, min(1.0, self.progress.every_s))):
            try:
                self.progress.tick()
            except Exception:  # a progress line must never break the run
                pass

    def stop(self) -> None:
        """Stop ticking."""
        self._stop.set()
