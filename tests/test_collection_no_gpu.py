"""Collecting initialises no GPU library: under ``-n 2`` with a cold derived-data cache,
the documents are tokenized (llama.cpp's vocabulary: its device registry, CUDA in a CUDA
build) only in a child process that sees no GPU, never in the controller or a worker, which
import neither llama.cpp nor torch while the run collects and runs the fake model. Every
Python process of the run records, through a ``sitecustomize`` on its path, which of those
libraries it imported and what ``CUDA_VISIBLE_DEVICES`` it had."""

from __future__ import annotations

import json

from tests.test_kv_suite import _project

PROBE = """
import json
import os
import sys

WATCHED = ("llama_cpp", "torch")


class _Watch:
    def find_spec(self, name, path=None, target=None):
        if name in WATCHED:
            facts = {"module": name, "argv": sys.argv, "pid": os.getpid(),
                     "worker": os.environ.get("PYTEST_XDIST_WORKER"),
                     "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}
            with open(os.path.join(os.environ["IMPORTS_SEEN"], f"{name}-{os.getpid()}.json"), "w") as out:
                json.dump(facts, out)
        return None


sys.meta_path.insert(0, _Watch())
"""


def test_only_a_gpu_less_child_loads_llama_cpp_while_collecting(pytester, monkeypatch):
    _project(pytester)
    site = pytester.mkdir("site")
    (site / "sitecustomize.py").write_text(PROBE)
    seen = pytester.mkdir("seen")
    monkeypatch.setenv("PYTHONPATH", str(site))
    monkeypatch.setenv("IMPORTS_SEEN", str(seen))
    monkeypatch.setenv("XDG_CACHE_HOME", str(pytester.path / "cache"))  # nothing derived yet
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # what a GPU machine's run may have
    result = pytester.runpytest_subprocess(
        "--pyargs", "extractbench.suites.kv", "--backend", "fake", "-n", "2",
        "--suite-option", "kv.path=items.jsonl", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    imports = [json.loads(p.read_text()) for p in seen.glob("*.json")]
    llama = [i for i in imports if i["module"] == "llama_cpp"]
    assert llama, "the documents were tokenized somewhere"
    for facts in llama:  # the tokenizer's own process, with no GPU visible
        assert facts["argv"][0].endswith("chunking.py"), facts  # not pytest, not a worker
        assert facts["cuda_visible_devices"] == "", facts
    assert not [i for i in imports if i["module"] == "torch"], imports
