"""Independent chains of calls at once (fixtures/models/chains.py): each lane its own real
backend, the chains' results and call log in chain order whichever ends first, a route group
per chain, the cache shared, a failing chain stopping the others, and the threads divided
among the lanes (fixtures/models/core_share.py)."""

from __future__ import annotations

import signal
import threading
import time

import pytest

from extractbench.fixtures.models import core_share
from extractbench.fixtures.models.cache import GenerationCache
from extractbench.fixtures.models.call_log import recording_calls
from extractbench.fixtures.models.chains import ChainStopped, Lanes, chain_route
from extractbench.fixtures.models.routing import ROUTE, routing
from extractbench.fixtures.models.wrappers import MODEL_LOADS, CachingBackend
from extractbench.suites.chains import run_chains
from extractbench.suites.model import Backend, Capabilities, Generation, ModelError, ModelInfo

INFO = ModelInfo(name="echo", backend="test", path="", sha256="")


class Echo:
    """A real backend double: answers ``prompt!``, remembering each call's route and
    thread; a call waits at ``meet`` (when given) for the other lane's call."""

    def __init__(self, made: list[Echo], meet: threading.Barrier | None) -> None:
        self.info, self.capabilities = INFO, Capabilities()
        self.meet, self.calls = meet, []
        made.append(self)

    def generate(self, prompt: str, **_: object) -> Generation:
        if self.meet is not None:
            self.meet.wait(timeout=10)  # BrokenBarrierError when the other lane never comes
        self.calls.append((prompt, ROUTE.get(), threading.current_thread().name))
        return Generation(f"{prompt}!", 1, 1, 0.01)


def caching(
    made: list[Echo], lanes: int, meet: threading.Barrier | None = None, cache=None
) -> CachingBackend:
    """A caching backend of :class:`Echo` on ``lanes`` lanes, as the model fixture's."""

    def backend(index: int) -> CachingBackend:
        return CachingBackend(
            INFO, "echo", lambda: Echo(made, meet), cache, label=f"lane {index + 1}" if index else "",
            lanes=Lanes(lambda: lanes, backend) if index == 0 else None,
        )  # fmt: skip

    return backend(0)


def chain(name: str, calls: int, done: list[str]):
    """A chain of ``calls`` dependent calls (each prompt holds the answer before it)."""

    def run(model: Backend) -> str:
        answer = name
        for _ in range(calls):
            answer = model.generate(answer, max_tokens=4).text
        done.append(name)
        return answer

    return run


def test_two_chains_run_at_once_and_come_back_and_are_logged_in_chain_order():
    made: list[Echo] = []
    meet = threading.Barrier(2)  # each call of one lane waits for a call of the other
    model = caching(made, lanes=2, meet=meet)
    done: list[str] = []
    log: list[dict] = []
    loads = len(MODEL_LOADS)
    with routing("minea/D0"), recording_calls(log):
        results = run_chains(model, [chain("a", 2, done), chain("b", 2, done)])
    assert results == ["a!!", "b!!"]
    assert len(made) == 2 and all(len(e.calls) == 2 for e in made)  # one real backend per lane
    # chain 0 on lane 0 in the item's group, chain 1 on lane 1 in a group of its own
    lanes = sorted((e.calls[0][2], e.calls[0][1], e.calls[0][0]) for e in made)
    assert lanes == [("chain-lane-0", "minea/D0", "a"), ("chain-lane-1", "minea/D0#chain1", "b")]
    assert [entry["text"] for entry in log] == ["a!", "a!!", "b!", "b!!"]
    assert [(entry["chain"], entry["lanes"]) for entry in log] == [(0, 2), (0, 2), (1, 2), (1, 2)]
    assert MODEL_LOADS[loads:][-1].startswith("model echo (lane 2) loaded")


def test_the_log_is_in_chain_order_when_the_first_chain_ends_last():
    made: list[Echo] = []
    model = caching(made, lanes=2)
    done: list[str] = []
    second_done = threading.Event()

    def first(lane: Backend) -> str:
        second_done.wait(timeout=10)
        return lane.generate("a", max_tokens=4).text

    def second(lane: Backend) -> str:
        text = lane.generate("b", max_tokens=4).text
        done.append("b")
        second_done.set()
        return text

    log: list[dict] = []
    with routing("g"), recording_calls(log):
        assert run_chains(model, [first, second]) == ["a!", "b!"]
    assert done == ["b"] and [entry["text"] for entry in log] == ["a!", "b!"]


def test_one_lane_runs_the_chains_one_after_the_other():
    made: list[Echo] = []
    model = caching(made, lanes=1)
    done: list[str] = []
    log: list[dict] = []
    with routing("g"), recording_calls(log):
        results = run_chains(model, [chain("a", 2, done), chain("b", 1, done)])
    assert results == ["a!!", "b!"] and done == ["a", "b"] and len(made) == 1
    lane = "chain-lane-0"
    assert made[0].calls == [("a", "g", lane), ("a!", "g", lane), ("b", "g#chain1", lane)]
    assert [entry["text"] for entry in log] == ["a!", "a!!", "b!"]
    assert [entry["chain"] for entry in log] == [0, 0, 1] and "lanes" not in log[0]


def test_a_chain_waiting_to_start_takes_a_second_lane_once_the_process_has_its_threads():
    """One lane allowed when the chains start (a neighbour still holds its cores); two
    once the first chain has begun: the second chain starts on lane 1 while the first
    still runs, not after it."""
    made: list[Echo] = []
    allowed = [1]
    second_started = threading.Event()

    def backend(index: int) -> CachingBackend:
        return CachingBackend(
            INFO, "echo", lambda: Echo(made, None), None, label=f"lane {index + 1}" if index else "",
            lanes=Lanes(lambda: allowed[0], backend) if index == 0 else None,
        )  # fmt: skip

    def first(lane: Backend) -> str:
        text = lane.generate("a", max_tokens=4).text
        allowed[0] = 2  # the neighbour's cores come to this process
        assert second_started.wait(timeout=10), "the second chain waited for the first"
        return lane.generate(text, max_tokens=4).text

    def second(lane: Backend) -> str:
        second_started.set()
        return lane.generate("b", max_tokens=4).text

    log: list[dict] = []
    with routing("g"), recording_calls(log):
        assert run_chains(backend(0), [first, second]) == ["a!!", "b!"]
    threads = sorted((e.calls[0][2], e.calls[0][0]) for e in made)
    assert threads == [("chain-lane-0", "a"), ("chain-lane-1", "b")]
    assert [(entry["chain"], entry["lanes"]) for entry in log] == [(0, 2), (0, 2), (1, 2)]


def test_the_lanes_share_the_cache_and_a_cached_chain_loads_nothing(tmp_path):
    cache = GenerationCache(tmp_path)
    made: list[Echo] = []
    done: list[str] = []
    chains = [chain("a", 3, done), chain("b", 3, done)]
    first = run_chains(caching(made, lanes=2, meet=threading.Barrier(2), cache=cache), chains)
    assert len(made) == 2
    again: list[Echo] = []
    log: list[dict] = []
    with recording_calls(log):
        assert run_chains(caching(again, lanes=2, cache=cache), chains) == first
    assert again == [] and len(log) == 6 and all(entry["cached"] for entry in log)


def test_a_failing_chain_stops_the_others_and_its_error_is_raised():
    made: list[Echo] = []
    model = caching(made, lanes=2)
    failed = threading.Event()

    def slow(lane: Backend) -> str:
        for n in range(50):  # never reaches its end: stopped before a call after the failure
            if n == 1:
                failed.wait(timeout=10)
            lane.generate(f"a{n}", max_tokens=4)
        return "never"

    def failing(lane: Backend) -> str:
        lane.generate("b", max_tokens=4)
        failed.set()
        raise ModelError("prompt over the context")

    log: list[dict] = []
    with recording_calls(log), pytest.raises(ModelError, match="over the context") as caught:
        run_chains(model, [slow, failing])
    assert not isinstance(caught.value, ChainStopped)
    slow_lane = next(e for e in made if e.calls[0][0] == "a0")
    assert 1 <= len(slow_lane.calls) < 50
    # the calls made before the failure stay in the item's log, chain by chain
    assert [entry["text"] for entry in log][-1] == "b!" and log[0]["text"] == "a0!"


def test_an_interrupt_in_a_chain_reaches_the_caller():
    model = caching([], lanes=2)

    def interrupted(lane: Backend) -> str:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_chains(model, [interrupted, lambda lane: lane.generate("b", max_tokens=1).text])


def test_a_model_without_run_chains_runs_them_in_order():
    class Plain:
        info, capabilities = INFO, Capabilities()

        def generate(self, prompt: str, **_: object) -> Generation:
            return Generation(prompt + "?", 1, 1, 0.0)

    done: list[str] = []
    assert run_chains(Plain(), [chain("a", 1, done), chain("b", 2, done)]) == ["a?", "b??"]
    assert done == ["a", "b"]


def test_each_chain_after_the_first_has_a_route_group_of_its_own():
    assert chain_route("minea/D0", 0) == "minea/D0"
    assert chain_route("minea/D0", 1) == "minea/D0#chain1"
    assert chain_route(None, 0) == "#chain0"  # outside an item: each chain starts empty too


def test_lanes_running_at_once_divide_the_process_threads(monkeypatch):
    monkeypatch.setattr(core_share, "_share", None)
    monkeypatch.setattr(core_share, "_lanes", 0)
    assert core_share.threads_now(4) == 4
    with core_share.lane():
        assert core_share.threads_now(4) == 4
        with core_share.lane():
            assert core_share.threads_now(4) == 2 and core_share.threads_now(1) == 1
        assert core_share.threads_now(4) == 4
    assert core_share.process_threads(4) == 4


def test_the_cache_answers_from_several_threads(tmp_path):
    cache = GenerationCache(tmp_path)
    errors: list[BaseException] = []

    def use(n: int) -> None:
        try:
            for i in range(50):
                cache.put(f"{n}-{i}", Generation(f"t{i}", 1, 1, 0.0))
                assert cache.get(f"{n}-{i}").text == f"t{i}"
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=use, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and cache.hits == 150


def test_ctrl_c_delivered_to_a_lane_thread_stops_the_chains_at_their_next_call():
    """The system may hand SIGINT to any thread; Python's handler runs in the main thread,
    which must wake while it waits for the lanes: KeyboardInterrupt comes at once, and each
    lane stops before its next call instead of running its chain to the end."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are installed from the main thread only")
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    calls: list[str] = []

    def slow(name: str):
        def run(lane: Backend) -> str:
            for n in range(100):
                if n == 2 and name == "a":
                    signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # to this lane
                time.sleep(0.02)
                calls.append(lane.generate(f"{name}{n}", max_tokens=1).text)
            return name

        return run

    started = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_chains(caching([], lanes=2), [slow("a"), slow("b")])
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(calls) < 50 and time.monotonic() - started < 1.5, (len(calls), calls[-3:])
