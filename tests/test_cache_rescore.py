"""Generation cache, resume after Ctrl-C, and --rescore, black-box with and without -n 2."""

from __future__ import annotations

import os
import signal
import sqlite3
import sys

import pytest

from extractbench.fixtures.models.cache import GenerationCache, generation_key
from extractbench.fixtures.models.fake.backend import ScriptedBackend
from extractbench.fixtures.models.wrappers import (
    CachingBackend,
    ReplayBackend,
    log_call,
    recording_calls,
)
from extractbench.suites.model import Generation
from tests.conftest import PROJECT_ADDOPTS, Output, interruptible, read_json
from tests.test_plugin import MODES, run


def _calls(record: dict) -> list[dict]:
    return [c for it in record["items"] for c in it["calls"]]


@pytest.mark.parametrize("mode", MODES)
def test_a_repeated_run_is_answered_from_the_cache_with_identical_scores(toy, mode):
    _, first = run(toy, mode)
    result, second = run(toy, mode)
    assert result.ret == 0
    assert first["counts"]["calls"] == 24 and first["counts"]["cached_calls"] == 0
    assert second["counts"]["cached_calls"] == 24 == len(_calls(second))
    assert second["aggregates"] == first["aggregates"]
    assert (toy.path / ".extractbench" / "cache.sqlite").is_file()
    result.stdout.fnmatch_lines(["*model calls: 24, 24 answered from the generation cache*"])


def test_no_cache_and_cache_dir(toy):
    _, plain = run(toy, [], "--no-cache")
    _, again = run(toy, [], "--no-cache")
    assert again["counts"]["cached_calls"] == 0 and not (toy.path / ".extractbench").exists()
    _, elsewhere = run(toy, [], "--cache-dir", "c2")
    assert (toy.path / "c2" / "cache.sqlite").is_file() and elsewhere["aggregates"] == plain[
        "aggregates"
    ]
    (toy.path / "c3").write_text("a file, not a folder")
    result, _ = run(toy, [], "--cache-dir", "c3")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*generation cache c3*cache.sqlite: cannot be used*--no-cache*"])


def test_a_run_stopped_with_ctrl_c_resumes_from_the_cache(toy):
    record = toy.path / "record.json"
    args = [sys.executable, "-m", "pytest", "--backend", "fake", "--data-dir", "data",
            "--report-json", str(record), "--suite-option", "toy.delay=0.4", "-p", "no:cacheprovider"]  # fmt: skip
    proc = interruptible([*args, "-v"], toy.path)
    output = Output(proc)
    assert output.wait_for("PASSED", 3), output.finish()[-3000:]
    os.kill(proc.pid, signal.SIGINT)
    output.finish(timeout=60)
    stopped = read_json(record)
    done = stopped["counts"]["scored"]
    assert stopped["complete"] is False and 0 < done < 24
    with sqlite3.connect(toy.path / ".extractbench" / "cache.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM generations").fetchone()[0] >= done
    _, resumed = run(toy, [])
    assert resumed["complete"] is True
    assert resumed["counts"]["cached_calls"] >= done


@pytest.mark.parametrize("mode", MODES)
def test_rescore_reproduces_the_aggregates_without_a_model(toy, mode):
    _, original = run(toy, mode, "--limit", "10")
    rescored_path = toy.path / "rescored.json"
    result = toy.runpytest_subprocess(
        "--rescore", "record.json", "--backend", "fake", "--data-dir", "data",
        "--report-json", str(rescored_path), *mode,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()
    rescored = read_json(rescored_path)
    assert rescored["aggregates"] == original["aggregates"]
    assert rescored["gates"] == original["gates"]
    assert rescored["rescore_of"]["run_id"] == original["run_id"]
    assert rescored["model"] == original["model"]
    assert {it["id"] for it in rescored["items"]} == {it["id"] for it in original["items"]}
    assert all(c["cached"] for c in _calls(rescored))
    result.stdout.fnmatch_lines(["*answered from the run record (--rescore)*"])


@pytest.mark.parametrize("mode", MODES)
def test_rescore_with_another_model_or_setting_is_a_usage_line_before_any_item(
    toy, monkeypatch, mode
):
    """``--rescore`` answers from the record: a ``--model`` (or another option choosing how
    the model answers) given with it, also with ``--rescore`` from ``PYTEST_ADDOPTS``, is
    refused instead of exiting 0 on the old record's answers."""
    run(toy, [], "--limit", "4")
    (toy.path / "other.gguf").write_bytes(b"GGUF" + bytes(64))
    cases = [
        (("--rescore", "record.json", "--model", "other.gguf"), "--model other.gguf"),
        (("--rescore", "record.json", "--backend", "hf"), "--backend hf"),
        (("--rescore", "record.json", "--seed", "3"), "--seed 3"),
        (("--rescore", "record.json", "--chat", "on"), "--chat on"),
    ]
    for args, named in cases:
        result = toy.runpytest_subprocess(*args, "--data-dir", "data", *mode)
        assert result.ret == 4, result.stdout.str()[-2000:]
        result.stderr.fnmatch_lines(
            [f"*--rescore record.json with {named}: a re-score answers every item from the "
             "record's generations (fake-lookup), so * would change nothing; run without "
             "--rescore*"]
        )  # fmt: skip
        assert "test_toy.py" not in result.stdout.str()
    monkeypatch.setenv("PYTEST_ADDOPTS", "--rescore record.json")
    result = toy.runpytest_subprocess("--model", "other.gguf", "--data-dir", "data", *mode)
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--rescore record.json with --model other.gguf: *"])


def test_paths_outside_the_checkout_follow_their_options_after_a_space(toy):
    """The plugin is a pytest11 entry point, so pytest knows ``--rescore`` and ``--model``
    before it picks the rootdir: a path after a space is the option's value, not a test
    path (with the plugin in a conftest this failed with "unrecognized arguments")."""
    _, original = run(toy, [], "--limit", "6")
    elsewhere = toy.path.parent / f"{toy.path.name}-elsewhere"
    elsewhere.mkdir()
    record = elsewhere / "RUN.json"
    (toy.path / "record.json").rename(record)
    rescored = toy.path / "rescored.json"
    result = toy.runpytest_subprocess(
        "--rescore", str(record), "--data-dir", "data", "--report-json", str(rescored)
    )
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert read_json(rescored)["aggregates"] == original["aggregates"]
    (elsewhere / "x.gguf").write_bytes(b"PK not a gguf")
    result = toy.runpytest_subprocess("--model", str(elsewhere / "x.gguf"), "--data-dir", "data")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*x.gguf: not a GGUF file*"])
    assert "unrecognized arguments" not in result.stderr.str()


def test_rescore_of_a_changed_prompt_is_an_item_error_saying_why(toy):
    run(toy, [])
    suite = (toy.path / "toy_suite.py").read_text()
    changed = suite.replace("prefix=f\"{row['text']}\\n\"", "prefix=f\"{row['text']}\\n\\n\"")
    assert changed != suite
    (toy.path / "toy_suite.py").write_text(changed)
    result = toy.runpytest_subprocess("--rescore", "record.json", "--data-dir", "data")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*--rescore: this prompt was not generated in the run record*"])


def test_rescore_needs_a_readable_record_with_calls(toy):
    (toy.path / "bad.json").write_text("{}")
    result = toy.runpytest_subprocess("--rescore", "bad.json", "--data-dir", "data")
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*--rescore*not an extractbench run record*"])


def test_caching_backend_loads_lazily_caches_and_logs(tmp_path):
    cache = GenerationCache(tmp_path)
    inner = ScriptedBackend(lambda prompt: prompt[::-1])
    loads = []
    served = CachingBackend(None, "fp", lambda: loads.append(1) or inner, cache)
    with recording_calls([]) as log:
        first = served.generate("abc", max_tokens=4, stop=("\n",))
        again = served.generate("abc", max_tokens=4, stop=("\n",))
        other = served.generate("abc", max_tokens=5, stop=("\n",))
    assert len(inner.prompts) == 2 and loads == [1]
    assert first.text == again.text == "cba" and again.cached and not first.cached
    assert not other.cached and [c["cached"] for c in log] == [False, True, False]
    fresh = CachingBackend(None, "fp", lambda: loads.append(1) or inner, GenerationCache(tmp_path))
    assert fresh.generate("abc", max_tokens=4, stop=("\n",)).cached and not fresh.loaded
    replay = ReplayBackend(None, "fp", log)
    assert replay.generate("abc", max_tokens=5, stop=("\n",)).text == "cba"
    assert log[0]["key"] == generation_key("fp", "abc", 4, ("\n",), None)


def test_the_call_log_belongs_to_the_running_item_only():
    """Calls outside an item are not logged; an item's log is not written from another
    thread (each thread has its own context)."""
    import threading

    generation = Generation("x", 1, 1, 0.1)
    log_call("outside", generation)
    with recording_calls([]) as log:
        log_call("k1", generation)
        other = threading.Thread(target=log_call, args=("from-another-thread", generation))
        other.start()
        other.join()
    log_call("after", generation)
    assert [c["key"] for c in log] == ["k1"]


def test_rescore_of_an_incomplete_record_is_incomplete_and_decides_no_gate(toy):
    """A re-score holds the record's items only: from an incomplete run it is incomplete
    too, never a complete PASS; and it never writes over the record it reads."""
    import json

    record = toy.path / "first.json"
    toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", str(record), "--no-cache"
    )  # fmt: skip
    data = read_json(record)
    data["complete"], data["items"] = False, data["items"][:10]
    record.write_text(json.dumps(data))
    for mode in ([], ["-n", "2"]):
        result = toy.runpytest_subprocess(
            "--rescore", str(record), "--data-dir", "data", "--report-json", "again.json",
            "--gate", "toy/accuracy>=0.1", *mode,
        )  # fmt: skip
        again = read_json(toy.path / "again.json")
        assert result.ret == 1 and again["complete"] is False, result.stdout.str()[-2000:]
        assert again["verdict"]["word"] == "INCOMPLETE" and again["gates"][0]["passed"] is None
    result = toy.runpytest_subprocess("--rescore", str(record), "--report-json", str(record))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--rescore *first.json --report-json *: the same file*"])
    assert read_json(record)["items"] == data["items"]


@pytest.mark.parametrize("mode", MODES)
def test_rescore_without_a_path_collects_the_records_suites_not_the_testpaths(toy, mode):
    """`pytest --rescore RUN.json` as the README writes it: the project's testpaths (here a
    failing harness test) are not collected beside the re-score."""
    run(toy, [], "--no-cache")
    toy.mkdir("harness")
    (toy.path / "harness" / "test_harness.py").write_text("def test_harness():\n    assert False\n")
    toy.makepyprojecttoml(
        f"[tool.pytest.ini_options]\naddopts = '{PROJECT_ADDOPTS}'\ntestpaths = ['harness']\n"
    )
    result = toy.runpytest_subprocess(
        "--rescore", "record.json", "--report-json", "again.json", "--data-dir", "data", *mode
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    assert "test_harness" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*24 passed*"])
