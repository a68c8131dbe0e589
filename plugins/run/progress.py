"""Progress lines of a long run: per suite, items done / total, items/s, generated tokens/s
and an ETA; the whole run's items and ETA; the item running longest. A line when a suite's
first item ends and when a suite ends, and the lot at least every N seconds
(``--progress N``) while the run goes on, items ending or not (:meth:`Progress.tick`,
called by a timer, so a MINEA item iterating for minutes still gets its lines); events
(collection, a model loaded) as they come.

Fed by the aggregating process (the xdist controller, or the only process) from every
item's start and report, so one set of lines covers all workers. A suite's rates are its
own since its first item started (the first report's time less that item's duration).

An ETA is measured work left over the items running at once (:func:`eta_seconds`): each
suite's items not yet started at its own measured time per item (the mean duration of its
finished items: a MINEA document and an FDA field differ a thousandfold), plus what its
running items have left of that time, over the most items seen running at once; never
less than the time the longest running item has already run (an item that has run 10
minutes is not done in 14 s). The run's ETA adds every suite whose total is known; while a
suite has no finished item its time is unknown and the run's ETA is a lower bound
("at least ..., minea not yet timed"). Generated tokens are every model call's
``completion_tokens`` (judge calls included), from the cache or not.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import pytest

__all__ = [
    "uncaptured",
    "Heartbeat",
    "Progress",
    "SuiteProgress",
    "duration_text",
    "eta_seconds",
    "COLLECTING_S",
]


class _CaptureManager(Protocol):
    """pytest's output-capture plugin (``capturemanager``), as far as it is used here."""

    def global_and_fixture_disabled(self) -> AbstractContextManager[None]: ...


def uncaptured(config: pytest.Config) -> AbstractContextManager[None]:
    """pytest's output capture released while a line goes to the terminal from inside an
    item (as pytest's live logging releases it), or nothing to release (``-s``)."""
    capman = cast(
        "_CaptureManager | None", config.pluginmanager.getplugin("capturemanager")
    )
    return capman.global_and_fixture_disabled() if capman is not None else nullcontext()

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


def eta_seconds(
    waiting: int, per_item_s: float, running_s: Collection[float], parallel: int
) -> float:
    """Seconds until a suite's items end, from its measured time per item.

    Args:
        waiting: items not yet started.
        per_item_s: the suite's mean duration of a finished item, in seconds.
        running_s: how long each of its running items has run, in seconds.
        parallel: the most items seen running at once (workers), at least 1.

    Returns:
        ``(waiting * per_item_s + sum(max(per_item_s - r, 0) for r in running_s)) /
        parallel``, and never less than ``max(running_s)``: an item already running that
        long is expected to need at least as long again (its suite's mean says nothing of
        an item that outlasts it).
    """
    work = waiting * per_item_s + sum(max(per_item_s - r, 0.0) for r in running_s)
    return max(work / max(parallel, 1), max(running_s, default=0.0))


@dataclass
class SuiteProgress:
    """One suite's items so far (ids counted once), failures, generated tokens, the
    summed duration of its finished items (``busy_s``), and when its first item started
    (``time.monotonic`` seconds)."""

    started: float
    done: set[str] = field(default_factory=set)
    failed: int = 0
    generated_tokens: int = 0
    busy_s: float = 0.0
    finished: bool = False

    @property
    def per_item_s(self) -> float | None:
        """The mean duration of its finished items (None before the first)."""
        return self.busy_s / len(self.done) if self.done else None

    def eta(self, total: int | None, running_s: Collection[float], parallel: int) -> float | None:
        """Seconds until its last item ends (:func:`eta_seconds`); None while its total or
        its time per item is unknown."""
        if not total or self.per_item_s is None:
            return None
        waiting = max(total - len(self.done) - len(running_s), 0)
        return eta_seconds(waiting, self.per_item_s, running_s, parallel)

    def line(
        self,
        name: str,
        total: int | None,
        now: float,
        running_s: Collection[float] = (),
        parallel: int = 1,
    ) -> str:
        """The progress line of this suite at ``now``; ``running_s``: how long each of its
        running items has run; ``parallel``: the most items seen running at once."""
        elapsed = max(now - self.started, 1e-9)
        done = len(self.done)
        rate, tokens = done / elapsed, self.generated_tokens / elapsed
        failed = f", {self.failed} failed" if self.failed else ""
        if self.finished:
            return (
                f"{name} done: {done:,} items in {duration_text(elapsed)}{failed}, "
                f"{rate:.2f} items/s, {tokens:.1f} generated tokens/s"
            )
        seconds = self.eta(total, running_s, parallel)
        eta = "unknown" if seconds is None else duration_text(seconds)
        if total:
            head = f"{name} {done:,}/{total:,} items ({100 * done / total:.0f}%)"
        else:
            head = f"{name} {done:,} items"
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
        self.parallel = 1  # the most items seen running at once
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
            self.parallel = max(self.parallel, len(self.running))
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
        state.busy_s += max(duration_s, 0.0)
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
            self._say(state.line(suite, total, now, self._running_s(suite, now), self.parallel))
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

    def _running_s(self, suite: str, now: float) -> list[float]:
        """How long each running item of ``suite`` has run (its node id's parameter
        starts with ``SUITE/``)."""
        return [
            now - since
            for nodeid, since in self.running.items()
            if nodeid.partition("[")[2].partition("/")[0] == suite
        ]

    def _lines(self, now: float) -> None:
        self.last = now
        for name, other in self.suites.items():
            if not other.finished:
                running = self._running_s(name, now)
                self._say(other.line(name, self.totals.get(name), now, running, self.parallel))
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
        parts = [f"run: {done:,} items in {duration_text(elapsed)}"]
        if total:
            parts = [f"run: {done:,}/{total:,} items of {len(known)} suite(s)",
                     f"{duration_text(elapsed)} so far", f"ETA {self._run_eta(known, now)}"]  # fmt: skip
        if self.running:
            nodeid, since = min(self.running.items(), key=lambda kv: kv[1])
            if "]@" in nodeid:  # xdist's loadgroup suffix: test[ID]@GROUP
                nodeid = nodeid[: nodeid.rindex("]@") + 1]
            name = nodeid.split("[", 1)[-1].rstrip("]") if "[" in nodeid else nodeid
            parts.append(
                f"{len(self.running)} running, longest {name} for {duration_text(now - since)}"
            )
        return ", ".join(parts)

    def _run_eta(self, known: Mapping[str, int], now: float) -> str:
        """The run's ETA: the suites' measured work left over the items running at once
        (:func:`eta_seconds`, summed), never less than the longest running item has run;
        "at least" while a suite with items left has no finished item to time."""
        work, untimed = 0.0, []
        for name, total in known.items():
            state = self.suites.get(name)
            running = self._running_s(name, now)
            left = total - (len(state.done) if state else 0)
            if left <= 0:
                continue
            if state is None or state.per_item_s is None:
                untimed.append(name)
                continue
            per_item = state.per_item_s
            work += max(left - len(running), 0) * per_item
            work += sum(max(per_item - r, 0.0) for r in running)
        longest = max((now - since for since in self.running.values()), default=0.0)
        seconds = max(work / self.parallel, longest)
        if not untimed:
            return duration_text(seconds)
        if seconds <= 0:
            return f"unknown ({', '.join(untimed)} not yet timed)"
        return f"at least {duration_text(seconds)} ({', '.join(untimed)} not yet timed)"


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
