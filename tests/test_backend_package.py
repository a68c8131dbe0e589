"""A backend is one folder and one entry point: a package outside extractbench, laid out as
the built-in backends are (``fixtures/models/<name>/``: its options, its backend, its
settled state and its kind), installed as a dist-info on ``sys.path``, runs a suite, has
its section in ``extractbench doctor`` and its settled state in the run record; one with a
``serve`` hook runs under ``--serve``, its own server started, used and stopped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import read_json

ROOT = Path(__file__).resolve().parents[1]

OPTIONS = """
from pydantic import Field

from extractbench.fixtures.models.backend_options import BackendOptions


class EchoOptions(BackendOptions):
    suffix: str = Field("", description="text added after each answer")
"""

BACKEND = '''
from dataclasses import replace

from extractbench.fixtures.models.fake.backend import FakeBackend


class EchoBackend(FakeBackend):
    """The fake model, its answers followed by a suffix."""

    def __init__(self, suffix):
        super().__init__()
        self.suffix = suffix

    def generate(self, prompt, **kwargs):
        out = super().generate(prompt, **kwargs)
        return replace(out, text=out.text + self.suffix)
'''

KIND = """
from dataclasses import dataclass, replace

from extractbench.fixtures.models.registry import BackendKind, SettledState
from extractbench.suites.model import Capabilities, ModelInfo
from toy_echo.backend import EchoBackend
from toy_echo.options import EchoOptions


@dataclass(frozen=True)
class EchoSettled(SettledState):
    lanes: int

    def fingerprint_tag(self, spec):
        return f":lanes={self.lanes}"

    def identity(self, spec):
        return {"toy_echo": {"suffix": spec.options.suffix}}

    def machine(self, spec):
        return {"toy_echo_machine": {"lanes": self.lanes}}


ECHO = BackendKind(
    name="toy-echo",
    resolve=lambda spec, model: spec,
    settle=lambda spec, tuning: replace(spec, settled=EchoSettled(1)),
    info=lambda spec: ModelInfo("echo-lookup", "toy-echo", "", ""),
    fingerprint=lambda spec: "toy-echo",
    load=lambda spec, items: EchoBackend(spec.options.suffix),
    capabilities=lambda spec, items: Capabilities(),
    description="the fake model with a suffix",
    options=EchoOptions,
    doctor=lambda: ["toy echo (--backend toy-echo)", "  lanes here: 1"],
)
"""


SERVED_KIND = """
import threading
from dataclasses import dataclass, field
from pathlib import Path

from extractbench.fixtures.models.registry import BackendKind, ServeSupport
from extractbench.suites.model import ModelInfo
from tests.fake_openai import MODEL_ID, FakeOpenAIServer


@dataclass
class ToyServer:
    fake: FakeOpenAIServer
    slots: int

    def describe(self):
        return {"program": "toy-server", "slots": self.slots}

    def watch(self, on_death):
        return threading.Thread(target=lambda: None)

    def stop(self):
        self.fake.stop()
        Path("toy-server-stopped").write_text("yes")


@dataclass(frozen=True)
class ToyPlan:
    fake: FakeOpenAIServer = field(compare=False)
    slots: int
    n_threads: int
    model: Path = Path("toy.model")

    @property
    def url(self):
        return self.fake.url

    @property
    def label(self):
        return f"toy-server x{self.slots}"


def _start(plan, n_ctx):
    Path("toy-server-started").write_text(str(n_ctx))
    return ToyServer(plan.fake.start(), plan.slots)


SERVED = BackendKind(
    name="toy-served",
    resolve=lambda spec, model: spec,
    info=lambda spec: ModelInfo("toy", "toy-served", "", ""),
    fingerprint=lambda spec: "toy-served",
    load=lambda spec, items: None,
    description="a model only a toy server serves",
    serve=ServeSupport(
        by="openai", model_name=MODEL_ID,
        plan=lambda spec, request: ToyPlan(FakeOpenAIServer(), request.slots, request.n_threads),
        start=_start, settled=lambda spec, options: None,
    ),
)
"""


def _install(site: Path) -> dict[str, str]:
    """The toy backend's package and its dist-info under ``site``; the environment that
    puts it on ``sys.path``."""
    package = site / "toy_echo"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A backend of another package."""\n')
    modules = {"options": OPTIONS, "backend": BACKEND, "kind": KIND, "served_kind": SERVED_KIND}
    for name, text in modules.items():
        (package / f"{name}.py").write_text(text)
    dist = site / "toy_echo-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-echo\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[extractbench.backends]\ntoy-echo = toy_echo.kind:ECHO\n"
        "toy-served = toy_echo.served_kind:SERVED\n"
    )
    paths = [str(site), str(ROOT), os.environ.get("PYTHONPATH", "")]  # ROOT: tests.fake_openai
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def test_a_backend_package_runs_a_suite_and_shows_in_doctor_and_the_record(toy, monkeypatch):
    env = _install(toy.path / "site")
    doctor = subprocess.run(
        [sys.executable, "-m", "extractbench.plugins.cli.main", "doctor"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    lines = doctor.stdout.splitlines()
    assert "toy echo (--backend toy-echo)" in lines and "  lanes here: 1" in lines
    assert lines.index("toy echo (--backend toy-echo)") > lines.index(
        "llama.cpp (--backend llama-cpp)"
    )
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])
    result = toy.runpytest_subprocess(
        "--backend", "toy-echo", "--suffix", " echo", "--data-dir", "data",
        "--report-json", "r.json", "-p", "no:cacheprovider",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    model = read_json(toy.path / "r.json")["model"]
    assert model["backend"] == "toy-echo" and model["fingerprint"] == "toy-echo:seed=0:lanes=1:suffix= echo"
    assert model["toy_echo"] == {"suffix": " echo"} and model["options"] == {"suffix": " echo"}
    assert list(model)[-1] == "toy_echo_machine" and model["toy_echo_machine"] == {"lanes": 1}
    assert list(model).index("toy_echo") < list(model).index("options")
    predictions = [it["prediction"] for it in read_json(toy.path / "r.json")["items"]]
    assert predictions and all(p.endswith(" echo") for p in predictions)


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_every_option_of_a_backend_is_in_the_cache_key_unless_it_says_why_not(
    toy, monkeypatch, workers
):
    """The toy backend's fingerprint code names no option: an answer-changing option set,
    and a field added to its options class later, each get their own cached answers; a
    field that declares it does not change answers shares them."""
    env = _install(toy.path / "site")
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])

    def run(*args: str) -> dict:
        result = toy.runpytest_subprocess(
            "--backend", "toy-echo", "--data-dir", "data", "--report-json", "r.json",
            "-p", "no:cacheprovider", *workers, *args,
        )  # fmt: skip
        assert result.ret == 0, result.stdout.str()[-2000:]
        return read_json(toy.path / "r.json")

    plain = run()
    assert plain["counts"]["cached_calls"] == 0 and plain["counts"]["calls"] > 0
    assert plain["model"]["fingerprint"] == "toy-echo:seed=0:lanes=1"  # defaults: unnamed
    echo = run("--suffix", " echo")
    assert echo["counts"]["cached_calls"] == 0, echo["model"]["fingerprint"]
    assert all(it["prediction"].endswith(" echo") for it in echo["items"])
    options = toy.path / "site" / "toy_echo" / "options.py"
    options.write_text(
        OPTIONS
        + '    style: str = Field("plain", description="a field added later")\n'
        + '    chatty_log: bool = Field(False, description="log each call", '
        + 'json_schema_extra={"fingerprint": "does not change answers"})\n'
    )
    assert run()["counts"]["cached_calls"] == plain["counts"]["calls"]  # default: one key
    styled = run("--style", "loud")
    assert styled["counts"]["cached_calls"] == 0
    assert styled["model"]["fingerprint"] == "toy-echo:seed=0:lanes=1:style=loud"
    chatty = run("--chatty-log")
    assert chatty["counts"]["cached_calls"] == plain["counts"]["calls"]


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_backend_package_with_a_serve_hook_runs_under_serve(toy, monkeypatch, workers):
    """``--serve`` plans, starts and stops the package's own server through its
    ``ServeSupport``; the openai backend answers from it; the record names it."""
    monkeypatch.setenv("PYTHONPATH", _install(toy.path / "site")["PYTHONPATH"])
    result = toy.runpytest_subprocess(
        "--backend", "toy-served", "--serve", "--chat", "off", "--data-dir", "data",
        "--report-json", "r.json", "-p", "no:cacheprovider", *workers,
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-2000:]
    record = read_json(toy.path / "r.json")
    slots = 2 if workers else 1
    assert record["model"]["backend"] == f"openai (--serve: toy-server x{slots})"
    assert record["model"]["fingerprint"].startswith(f"served-toy-serverx{slots}:")
    assert record["settings"]["server"] == {"program": "toy-server", "slots": slots}
    predictions = [it["prediction"] for it in record["items"]]
    assert predictions and all(isinstance(p, str) for p in predictions)
    assert (toy.path / "toy-server-started").read_text() == "None"  # no window known
    assert (toy.path / "toy-server-stopped").read_text() == "yes"


@pytest.mark.parametrize("folder", ["llama_cpp", "hf", "openai", "fake"])
def test_each_built_in_backend_has_the_same_shape(folder):
    """The built-in backends are laid out as a third-party one is: a folder with its kind."""
    from importlib.metadata import entry_points

    here = Path(__file__).resolve().parents[1] / "fixtures" / "models" / folder
    assert (here / "kind.py").is_file() and (here / "__init__.py").is_file()
    values = {ep.value for ep in entry_points(group="extractbench.backends")}
    assert any(v.startswith(f"extractbench.fixtures.models.{folder}.kind:") for v in values)
