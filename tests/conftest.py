"""Shared fixtures for the harness's own tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

# torch, where installed, is imported before any test loads llama.cpp, in every test process:
# the order the product keeps too (fixtures/models/hf/cuda_clash.py). A worker whose files run in
# another order could otherwise import torch after llama.cpp, or import it twice (an
# in-process pytester run restores sys.modules, dropping a torch imported inside it).
from extractbench.fixtures.models.hf.cuda_clash import torch_first  # noqa: E402
from extractbench.fixtures.models.hf.gguf_cache import CACHE_ENV  # noqa: E402
from extractbench.suites.files import cache_dir  # noqa: E402

torch_first()
# transformers' conversion of the default GGUF model, made once and shared by every test
# process and pytester run (their HOME is a temporary folder)
os.environ.setdefault(CACHE_ENV, str(cache_dir() / "test-models" / "hf-from-gguf"))


# the cores this test run may use, read before a worker is pinned to one of them and kept
# in the environment: a test module importing this file gets a second copy of it, after
if hasattr(os, "sched_getaffinity"):
    os.environ.setdefault("EXTRACTBENCH_TEST_CORES", ",".join(map(str, os.sched_getaffinity(0))))
    ALL_CORES: frozenset[int] | None = frozenset(
        int(c) for c in os.environ["EXTRACTBENCH_TEST_CORES"].split(",")
    )
else:
    ALL_CORES = None


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Under xdist, a test process that dies ends the harness's test run at once, failed
    (``--max-worker-restart 0`` unless given): with a replaced worker, pytest-xdist's
    ``--dist loadfile`` scheduler has waited forever for the dead worker's files."""
    if hasattr(config.option, "maxworkerrestart") and config.option.maxworkerrestart is None:
        config.option.maxworkerrestart = "0"
    _one_core_per_worker(config)


def _one_core_per_worker(config: pytest.Config) -> None:
    """Each xdist worker of the harness's tests, and every process it starts, on its own
    core: the models the tests run (in the worker, in pytester runs, in servers) take the
    cores they may run on (``fixtures.models.core_share.cores``), so that two workers on two
    cores do not start two-thread models each: four threads whose barriers wait on each
    other on two cores."""
    workerid = getattr(config, "workerinput", {}).get("workerid")
    if workerid is None or ALL_CORES is None:
        return
    available = sorted(ALL_CORES)
    workers = int(config.workerinput.get("workercount", 1))  # type: ignore[attr-defined]
    if len(available) >= workers > 1:
        os.sched_setaffinity(0, {available[int(workerid.removeprefix("gw")) % len(available)]})


# The harness's tests in two tiers: a bare ``pytest tests/`` runs the fast one; ``-m slow`` the
# slow one, which CI runs too (``.ci/run``); ``-m "slow or not slow"`` both. Slow are the tests
# marked ``@pytest.mark.slow`` (end-to-end runs of a minute or more) and the ``-n 2`` twin of
# a test run both in one process and under pytest-xdist (a parameter id ``xdist`` beside a
# ``serial`` one): the fast tier keeps the serial run of the same behaviour, the slow tier
# the run whose two workers each start Python, import the plugin and load a model again.
SLOW = "slow"


def _is_xdist_twin(item: pytest.Item) -> bool:
    callspec = getattr(item, "callspec", None)
    return callspec is not None and "xdist" in callspec.id.split("-")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks the xdist twins slow; without a ``-m`` expression, deselects the slow tier,
    except a test named by its node id (``pytest tests/test_x.py::test_y``), which runs as
    asked. Runs before pytest's own ``-m`` filter, which then sees these marks."""
    for item in items:
        if _is_xdist_twin(item):
            item.add_marker(SLOW)
    if config.option.markexpr:
        return
    here = config.invocation_params.dir
    named = [(here / path, name) for path, _, name in (a.partition("::") for a in config.args) if name]
    keep, slow = [], []
    for item in items:
        _, _, test = item.nodeid.partition("::")
        explicit = any(
            item.path == path.resolve() and (test == name or test.startswith((f"{name}[", f"{name}::")))
            for path, name in named
        )
        (slow if item.get_closest_marker(SLOW) and not explicit else keep).append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = keep


def pytest_report_header(config: pytest.Config) -> str | None:
    """The tier this run holds, in the header: a reader of a log sees what was left out."""
    if config.option.markexpr:
        return f"extractbench harness tests: -m {config.option.markexpr!r}"
    return "extractbench harness tests: the fast tier (the slow one: -m slow; both: -m 'slow or not slow')"


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytest's ``pytester``, whose pytest runs leave out two third-party pytest plugins no
    test uses: Faker's (the synthetic tables' and MINEA's fake facts; a ``faker`` fixture)
    and anyio's (httpx's async layer; async tests). Importing them cost each pytest process
    about 0.7 s of CPU of its 2.7 s start, and the tests start over a thousand. Set after
    pytester clears ``PYTEST_ADDOPTS``; a test that sets the variable itself replaces it."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:faker -p no:anyio")
    return pytester


@pytest.fixture
def all_cores():
    """This test (and what it starts) on every core of the machine, its worker's one core
    given back afterwards: for tests of how the cores are shared."""
    if ALL_CORES is None:
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, ALL_CORES)
    yield
    os.sched_setaffinity(0, before)


# The toy suite (toy_suite.py in a pytester project): a Suite as a third party writes one.
TOY_SUITE = """
import json
import time
from pathlib import Path

from pydantic import Field

from extractbench.suites.item import DataError, DataMissing, Item, SuiteData
from extractbench.suites.suite_options import SuiteOptions
from extractbench.suites.protocol import ItemResult, Suite, generate


class ToyOptions(SuiteOptions):
    delay: float = Field(0.0, ge=0, description="seconds each item waits (a run stopped midway)")


def load(data_dir: Path, options: ToyOptions) -> SuiteData:
    path = data_dir / "toy.jsonl"
    if not path.exists():
        raise DataMissing(f"{path} not found")
    items = []
    for lineno, line in enumerate(path.read_text().splitlines(), start=1):
        try:
            row = json.loads(line)
        except ValueError:
            raise DataError(f"{path}:{lineno}: not valid JSON") from None
        items.append(
            Item(
                id=f"toy/{row['doc']}/{row['key']}",
                group=f"toy/{row['doc']}",
                prefix=f"{row['text']}\\n",
                suffix=f"{row['key']}:",
                reference=row["value"],
                meta={"key": row["key"]},
                max_tokens=8,
                stop=("\\n",),
            )
        )
    return SuiteData(items, notes={"rows": len(items)})


def run(item, models, options: ToyOptions) -> ItemResult:
    if options.delay:
        time.sleep(options.delay)
    generation = generate(item, models.model)
    accuracy = float(item.reference.lower() in generation.text.lower())
    return ItemResult({"accuracy": accuracy, "length": min(1.0, len(generation.text) / 20)}, generation)


SUITE = Suite(
    "toy", Path(__file__).parent, "test_toy.py::test_toy", load=load, run=run,
    options=ToyOptions, breakdown=("key",), metrics=("accuracy", "length"),
    data=("toy.jsonl",), data_source="the toy rows", prefetch=True,
)
"""

TOY_TEST = """
from extractbench.plugins.run.suite_test import suite_test

test_toy = suite_test("toy")
"""

TOY_CONFTEST = """
def pytest_extractbench_suites():
    from toy_suite import SUITE

    return [SUITE]
"""


def toy_rows(n_docs: int = 6) -> list[dict[str, str]]:
    """Rows whose fake-model answers are right for some keys and wrong for others."""
    rows = []
    for d in range(n_docs):
        text = f"Applicant: Acme {d}\nColour: red\nSize: {d * 7} mm"
        rows.append({"doc": f"d{d}", "key": "applicant", "value": f"Acme {d}", "text": text})
        rows.append(
            {"doc": f"d{d}", "key": "colour", "value": "blue" if d % 2 else "red", "text": text}
        )
        rows.append({"doc": f"d{d}", "key": "size", "value": f"{d * 7} mm", "text": text})
        rows.append({"doc": f"d{d}", "key": "weight", "value": "3 kg", "text": text})
    return rows


# the options of the tests' pytest projects: items grouped as the suites group them, and no
# plots of the run's metrics (drawing them took 2.8 s of a 6.6 s toy run); the tests of the
# plots ask for them with --report-plots on
PROJECT_ADDOPTS = "--dist loadgroup --report-plots off"


@pytest.fixture
def toy(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester project holding a toy suite with data in ./data; its runs use the
    default model unless a test passes ``--backend fake``."""
    pytester.makeconftest(TOY_CONFTEST)
    pytester.makepyfile(toy_suite=TOY_SUITE, test_toy=TOY_TEST)
    data = pytester.mkdir("data")
    (data / "toy.jsonl").write_text("\n".join(json.dumps(r) for r in toy_rows()) + "\n")
    pytester.makepyprojecttoml(f"[tool.pytest.ini_options]\naddopts = '{PROJECT_ADDOPTS}'\n")
    return pytester


def read_json(path: Path) -> dict:
    """A JSON file the tests read. A run record is checked on the way: it validates
    against the record's JSON Schema (``extractbench schema``), and deciding it again as
    ``extractbench report`` does gives the verdict and exit status it holds (the live
    run, ``--rescore``, ``merge`` and ``report`` agree)."""
    data = json.loads(Path(path).read_text())
    if isinstance(data, dict) and "schema_version" in data:
        check_record(data)
    return data


def decide_facts(*gates: str, **facts: object):  # noqa: ANN201 - a plugins.verdict.Verdict
    """``plugins.verdict.decide`` on a record made of ``facts`` (every other field its
    default), gated on the ``gates`` expressions, with the record's own selection."""
    from extractbench import plugins
    from extractbench.plugins.record import SCHEMA_VERSION, parse_record
    from extractbench.plugins.verdict.decision import GateSet
    from extractbench.plugins.verdict.gates import parse_gate

    record = parse_record(
        {"schema_version": SCHEMA_VERSION, "run_id": "t", "selection": {}, **facts}
    )
    thresholds = tuple(parse_gate(g) for g in gates)
    return plugins.verdict.decide(record, GateSet(thresholds), record.selection)


def check_record(data: dict) -> None:
    """Assert a run record's schema and that ``report``'s decision agrees with it."""
    import jsonschema

    from extractbench import plugins
    from extractbench.plugins.cli.merge import record_gates
    from extractbench.plugins.record import parse_record, record_schema
    from extractbench.plugins.verdict.decision import GateSet

    jsonschema.validate(data, record_schema())
    record = parse_record(data)
    recorded = record.baseline.model_dump(mode="json") if record.baseline else None
    gates = GateSet(record_gates(record, "record"), None, recorded)
    decided = plugins.verdict.decide(record, gates, record.selection)
    lost = decided.with_lost_outputs(record.output_errors)
    assert record.verdict is not None
    assert (lost.status, lost.word) == (record.exit_status, record.verdict.word), (
        f"report decides {lost.word} (exit {lost.status}), the run wrote "
        f"{record.verdict.word} (exit {record.exit_status}): {lost.reasons} vs {record.verdict.reasons}"
    )


def copy_checkout(dest: Path) -> Path:
    """A copy of the checkout's package (its three folders, ``extractbench/`` and the files
    at the top) in ``dest``, without compiled files: a fresh clone for a test that must not
    run this checkout's files. Run Python in it with ``cwd=dest`` (or ``PYTHONPATH``) so
    ``extractbench`` is imported from the copy."""
    import shutil

    root = Path(__file__).resolve().parents[1]
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("conftest.py", "pyproject.toml", "setup.py"):
        shutil.copy(root / name, dest / name)
    for name in ("extractbench", "plugins", "fixtures", "suites"):
        # symlinks=True: extractbench/{plugins,fixtures,suites} stay links to the copied folders
        shutil.copytree(
            root / name, dest / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__")
        )
    return dest


def require_installed(*modules: str) -> None:
    """Skip the test unless every module is installed. Unlike ``pytest.importorskip`` it
    does not import them: the test runs them in a subprocess (a pytest run of the product),
    and importing transformers here would only cost the test process its start-up time."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)}")


# Restores SIGINT's default disposition, then becomes the command: a test run started as
# a shell's background job ignores SIGINT and its children would inherit that, so Ctrl-C
# would never reach them. Done by an exec in the child rather than ``preexec_fn``, which is
# unsafe in a process with threads (an xdist worker with torch loaded died in it).
_SIGINT_DEFAULT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


def interruptible(args: list[str], cwd: Path, **kwargs: object) -> subprocess.Popen:
    """``subprocess.Popen`` for a pytest run a test will stop with SIGINT or SIGTERM; the
    child runs ``args`` unchanged, with SIGINT's default disposition."""
    return subprocess.Popen(
        [sys.executable, "-c", _SIGINT_DEFAULT, *args], cwd=cwd, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, **kwargs,
    )  # fmt: skip


class Output:
    """Collects a process's output lines in a thread, so a test can wait for progress
    (items finished) instead of sleeping a fixed time, which a loaded machine outlasts."""

    def __init__(self, proc: subprocess.Popen) -> None:
        import threading

        self.proc = proc
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.append(raw.decode("utf-8", "replace"))

    def wait_for(self, needle: str, count: int = 1, timeout: float = 120) -> bool:
        """True once ``count`` lines contain ``needle`` (False on timeout or exit)."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if sum(needle in line for line in list(self.lines)) >= count:
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.1)
        return False

    def finish(self, timeout: float = 60) -> str:
        """Wait for the process to end; its whole output."""
        self.proc.wait(timeout=timeout)
        self._thread.join(timeout=10)
        return "".join(self.lines)


REQUIRE_LLAMA_SERVER_ENV = "EXTRACTBENCH_REQUIRE_LLAMA_SERVER"


@pytest.fixture(scope="module")
def llama_server():
    """The built ``llama-server`` (``extractbench server build``); the test skips without
    one, unless ``EXTRACTBENCH_REQUIRE_LLAMA_SERVER`` is true (CI): then it fails, so the
    release gate cannot lose those tests quietly."""
    from extractbench.fixtures.models.llama_cpp.server_build import find_llama_server
    from extractbench.suites.suite_options import truthy

    found = find_llama_server()
    if found is None:
        if truthy(os.environ.get(REQUIRE_LLAMA_SERVER_ENV, "")):  # 1/true/yes/on; 0 or unset: skip
            pytest.fail(f"{REQUIRE_LLAMA_SERVER_ENV} is set but no llama-server was found: "
                        "run extractbench server build")  # fmt: skip
        pytest.skip("no llama-server: run extractbench server build")
    return found
