"""A model that kills its own process: the weight-repack decision that avoids the known
case (llama.cpp's AMX repacking), and what the run does when a process dies anyway
(named crash, no INTERNALERROR, the other items run, exit 7) with and without xdist."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from extractbench.fixtures.models.llama_cpp.repack import build_features, cpu_flags, decide
from extractbench.fixtures.models.llama_cpp.serve import server_command
from extractbench.plugins.run.crashes import crash_message, describe_fault
from extractbench.plugins.verdict.exit_codes import CRASHED
from tests.conftest import decide_facts, read_json

AMX_CPU = frozenset({"avx2", "avx512f", "amx_tile", "amx_int8", "amx_bf16"})
PLAIN_CPU = frozenset({"avx2", "fma", "f16c"})
AMX_BUILD = build_features("CPU : AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | REPACK = 1 |")
PLAIN_BUILD = build_features("CPU : AVX2 = 1 | AVX512 = 1 | REPACK = 1 |")


# ---------------------------------------------------------------- the repack decision


@pytest.mark.parametrize(
    ("flags", "features", "repack"),
    [(AMX_CPU, AMX_BUILD, False), (AMX_CPU, PLAIN_BUILD, True), (PLAIN_CPU, AMX_BUILD, True),
     (PLAIN_CPU, PLAIN_BUILD, True), (frozenset(), {}, True)],
)  # fmt: skip
def test_auto_turns_repacking_off_only_on_an_amx_cpu_with_an_amx_build(flags, features, repack):
    decision = decide("auto", flags, features)
    assert decision.repack is repack
    assert decision.cpu_amx == ("amx_tile" in flags)
    assert decision.build_amx == (features.get("AMX_INT8") == "1")
    assert ("20824" in decision.reason) is (not repack)


@pytest.mark.parametrize("mode", ["on", "off"])
def test_on_and_off_override_the_cpu(mode):
    for flags in (AMX_CPU, PLAIN_CPU):
        decision = decide(mode, flags, AMX_BUILD)
        assert decision.repack is (mode == "on") and decision.mode == mode
        assert decision.to_dict()["reason"] == f"--weight-repack {mode}"


def test_an_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="--weight-repack fast: choose one of auto, on, off"):
        decide("fast", PLAIN_CPU, PLAIN_BUILD)


def test_cpu_flags_come_from_the_first_flags_line(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor : 0\nflags\t\t: fpu sse2 amx_tile avx2\n\nprocessor : 1\n")
    assert cpu_flags(info) == {"fpu", "sse2", "amx_tile", "avx2"}
    assert cpu_flags(tmp_path / "absent") == frozenset()


def test_the_server_command_says_no_repack_when_repacking_is_off(tmp_path):
    from extractbench.fixtures.models.llama_cpp.server_build import BuiltServer

    binary = BuiltServer(tmp_path / "llama-server", "PATH", None)
    args = dict(model=tmp_path / "m.gguf", port=1, n_ctx=512, n_threads=1, slots=1, seed=0)
    assert "--no-repack" in server_command(**args, binary=binary, repack=False)
    assert "--no-repack" not in server_command(**args, binary=binary, repack=True)
    python = server_command(**args, binary=None, repack=False)
    assert python[:3] == [sys.executable, "-m", "extractbench.fixtures.models.llama_cpp.repack"]
    assert server_command(**args, binary=None, repack=True)[2] == "llama_cpp.server"


def test_the_installed_build_is_decided_and_recorded_in_the_model_section(tmp_path):
    pytest.importorskip("llama_cpp")
    from extractbench.fixtures.models import resolve_model_spec
    from extractbench.fixtures.models.llama_cpp.gpu import LlamaCppOptions

    spec = resolve_model_spec("llama-cpp", None, 0, 1)
    here = decide("auto", cpu_flags(), build_features())
    assert spec.describe()["weight_repack"] == here.to_dict()
    assert spec.fingerprint().endswith(":repack=off") is (not here.repack)
    forced = resolve_model_spec("llama-cpp", None, 0, 1, options=LlamaCppOptions(weight_repack="off"))
    assert forced.fingerprint().endswith(":seed=0:repack=off")


# ---------------------------------------------------------------- fault reports

PY311_REPORT = """Fatal Python error: Segmentation fault

Thread 0x00007f1 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait

Current thread 0x00007f2 (most recent call first):
  File "/venv/lib/python3.11/site-packages/llama_cpp/_internals.py", line 312 in decode
  File "/venv/lib/python3.11/site-packages/llama_cpp/llama.py", line 670 in eval

Extension modules: numpy.core._multiarray_umath (total: 1)
"""

PY314_REPORT = PY311_REPORT.replace(
    "Extension modules",
    'Current thread\'s C stack trace (most recent call first):\n  Binary file "/venv/lib/libggml-cpu.so", at ggml_backend_amx_mul_mat+0x1d [0x7f3]\n\nExtension modules',
)


def test_a_fault_report_names_the_signal_the_top_frame_and_the_library():
    fault = describe_fault(PY311_REPORT)
    assert fault == {
        "signal": "SIGSEGV",
        "frame": "/venv/lib/python3.11/site-packages/llama_cpp/_internals.py:312 in decode",
        "library": "llama_cpp",
    }
    assert describe_fault(PY314_REPORT)["library"] == "libggml-cpu.so"
    assert describe_fault("", 9) == {"signal": "SIGKILL", "frame": None, "library": None}
    message = crash_message("gw1", "suites/x.py::t[x/1]", fault)
    assert message.startswith("worker gw1 died from SIGSEGV while running suites/x.py::t[x/1]")
    assert message.endswith("_internals.py:312 in decode (llama_cpp)")
    assert "out-of-memory" in crash_message("main", "n", describe_fault(""))


def test_a_crash_decides_exit_7_before_the_items_and_gates():
    crash = {"item": "x/1", "nodeid": "t[x/1]", "worker": "gw0",
             "message": "worker gw0 died from SIGSEGV while running t[x/1]"}  # fmt: skip
    record = {
        "counts": {"items": 2, "expected": 2}, "crashes": [crash],
        "items": [{"id": "x/0", "suite": "x", "scores": {"a": 0.0}},
                  {"id": "x/1", "suite": "x", "outcome": "failed", "error": crash["message"]}],
    }  # fmt: skip
    decision = decide_facts("x/a>=1", **record)
    assert decision.status == CRASHED == 7 and decision.word == "CRASHED"
    assert decision.reasons[0] == "worker gw0 died from SIGSEGV while running t[x/1]"
    assert decision.gates[0].passed is None  # the failing gate is not decided either
    assert decide_facts("x/a>=1", **record, output_errors=["record: disk full"]).status == 6
    assert decide_facts("x/a>=1", **record, interrupted="SIGINT").status == 2


# ---------------------------------------------------------------- a backend that segfaults

SEGFAULTING_BACKEND = """
import os
import signal

from extractbench.fixtures.models.fake.backend import FakeBackend

_generate = FakeBackend.generate


def segfaulting_generate(self, prompt, **kwargs):
    if "Acme 3" in prompt and prompt.endswith("size:"):
        os.kill(os.getpid(), signal.SIGSEGV)  # as llama.cpp's AMX kernel does
    return _generate(self, prompt, **kwargs)


FakeBackend.generate = segfaulting_generate
"""


@pytest.mark.parametrize(
    "mode", [["-n", "0", "--crash-guard", "on"], ["-n", "2"]], ids=["n0", "n2"]
)
def test_a_backend_that_segfaults_on_one_item_is_a_named_crash(toy, mode):
    conftest = toy.path / "conftest.py"
    conftest.write_text(conftest.read_text() + SEGFAULTING_BACKEND)
    record, junit = toy.path / "record.json", toy.path / "junit.xml"
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", str(record),
        "--junitxml", str(junit), "-p", "no:cacheprovider", "--no-cache", *mode,
    )  # fmt: skip
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output, output[-4000:]
    assert result.ret == CRASHED, output[-4000:]
    rec = read_json(record)
    assert rec["verdict"]["word"] == "CRASHED" and rec["exit_status"] == CRASHED
    [crash] = rec["crashes"]
    assert crash["item"] == "toy/d3/size" and crash["signal"] == "SIGSEGV"
    assert crash["worker"] == ("main" if mode[1] == "0" else crash["worker"])
    assert crash["frame"].endswith("in segfaulting_generate") and "conftest.py" in crash["frame"]
    assert "Fatal Python error: Segmentation fault" in crash["fault_report"]
    line = f"died from SIGSEGV while running {crash['nodeid']}; top frame"
    assert line in output  # the terminal names it
    items = {it["id"]: it for it in rec["items"]}
    assert len(items) == 24 and rec["counts"]["failed"] == 1  # the others ran, once
    assert (
        items["toy/d3/size"]["outcome"] == "failed" and "SIGSEGV" in items["toy/d3/size"]["error"]
    )
    assert all(it["outcome"] == "passed" for key, it in items.items() if key != "toy/d3/size")
    assert all(g["passed"] is None for g in rec["gates"])  # not decided on a crashed run
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    failed = [c for c in cases.values() if c.find("failure") is not None]
    assert [c.get("name").split("@")[0] for c in failed] == ["test_toy[toy/d3/size]"]
    assert "SIGSEGV" in failed[0].find("failure").get("message")
    assert len(cases) == 24


def test_the_guard_replays_finished_items_instead_of_running_them_again(toy):
    """Under -n 0 the second process reports the items the first finished from the
    journal: each item's generation is made once (the fake backend counts them)."""
    conftest = toy.path / "conftest.py"
    counter = toy.path / "calls.txt"
    conftest.write_text(
        conftest.read_text()
        + SEGFAULTING_BACKEND
        + f"""
_segv = FakeBackend.generate


def counting_generate(self, prompt, **kwargs):
    with open({str(counter)!r}, "a") as out:
        out.write(prompt.replace("\\n", " ") + "\\n")
    return _segv(self, prompt, **kwargs)


FakeBackend.generate = counting_generate
"""
    )
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", "r.json",
        "-p", "no:cacheprovider", "--no-cache", "-n", "0", "--crash-guard", "on",
    )  # fmt: skip
    assert result.ret == CRASHED, result.stdout.str()[-3000:]
    prompts = counter.read_text().splitlines()
    assert len(prompts) == 24 and len(set(prompts)) == 24  # 23 scored + the crashed one
    result.stderr.fnmatch_lines(["*died from SIGSEGV*remaining items go on in a new process"])


def test_without_the_guard_a_segfault_under_n0_kills_the_run(toy):
    """--crash-guard off: the process dies with the signal (what the guard prevents)."""
    conftest = toy.path / "conftest.py"
    conftest.write_text(conftest.read_text() + SEGFAULTING_BACKEND)
    result = toy.runpytest_subprocess(
        "--backend", "fake", "--data-dir", "data", "--report-json", "r.json",
        "-p", "no:cacheprovider", "--no-cache", "-n", "0", "--crash-guard", "off",
    )  # fmt: skip
    assert result.ret == -11
    assert not Path(toy.path / "r.json").exists()


def test_serve_decides_the_repacking_given_with_it_and_keys_it():
    """``--weight-repack`` is llama-cpp's own option, which its ``ServeSupport`` declares the
    server takes: the served model's settled state is decided from the option as given with
    ``--serve``, and ``off`` keeps its cached answers apart (``:repack=off``)."""
    from extractbench.fixtures.models import ModelSpec
    from extractbench.fixtures.models.llama_cpp.gpu import LlamaCppOptions
    from extractbench.fixtures.models.llama_cpp.kind import LLAMA_CPP

    support = LLAMA_CPP.serve
    assert support is not None and "weight_repack" in support.options
    local = ModelSpec("llama-cpp", Path("m.gguf"), 0, 1)
    off = support.settled(local, LlamaCppOptions(weight_repack="off"))
    assert off.repack.mode == "off" and off.fingerprint_tag(local) == ":repack=off"
    assert support.settled(local, None).repack.mode == "auto"


def test_a_backend_whose_server_takes_an_option_it_lacks_is_refused():
    from dataclasses import replace

    from extractbench.fixtures.models.llama_cpp.kind import LLAMA_CPP
    from extractbench.fixtures.models.registry import check_backend_kind
    from extractbench.suites.model_files import ModelFileError

    bad = replace(LLAMA_CPP, serve=replace(LLAMA_CPP.serve, options=("n_gpu_layers", "rope")))
    with pytest.raises(ModelFileError, match="serve.options name rope, not fields of LlamaCppOptions"):
        check_backend_kind("llama-cpp = x:Y", "llama-cpp", bad)
