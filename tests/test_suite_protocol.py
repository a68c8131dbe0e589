"""The Suite protocol: entry-point registration (a suite in another package), typed options,
``run`` as a plain function, and item metadata without options."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from extractbench.fixtures.models.fake.backend import FakeBackend
from extractbench.suites.item import DataMissing
from extractbench.suites.protocol import ItemResult, Models, Suite
from extractbench.suites.registry import ENTRY_POINT_GROUP, Registry, RegistryError
from extractbench.suites.suite_options import dump_options, option_names
from tests.conftest import read_json

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data not present")

OTHER_SUITE = """
from pathlib import Path

from extractbench.suites.item import DataMissing, Item, SuiteData
from extractbench.suites.suite_options import SuiteOptions
from extractbench.suites.protocol import ItemResult, Suite, generate


class OtherOptions(SuiteOptions):
    cue: str = "colour:"


def load(data_dir, options):
    path = data_dir / "other.txt"
    if not path.is_file():
        raise DataMissing(f"{path} not found")
    return SuiteData([
        Item(id=f"other/{i}", group=f"other/{i}", prefix=line + "\\n", suffix=options.cue,
             reference=line.split(":")[1].strip(), meta={"n": i}, max_tokens=8, stop=("\\n",))
        for i, line in enumerate(path.read_text().splitlines())
    ])


def run(item, models, options):
    generation = generate(item, models.model)
    return ItemResult({"accuracy": float(item.reference in generation.text)}, generation)


SUITE = Suite("other", Path.cwd(), "test_other.py::test_other", load=load, run=run,
              options=OtherOptions, breakdown=("n",), metrics=("accuracy",),
              data=("other.txt",), data_source="two lines")
"""


def _install_other_package(site: Path) -> None:
    """A package ``othersuite`` with an ``extractbench.suites`` entry point, laid out as pip
    installs one (a dist-info folder beside the package), on ``site``."""
    (site / "othersuite").mkdir(parents=True)
    (site / "othersuite" / "__init__.py").write_text(OTHER_SUITE)
    info = site / "othersuite-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: othersuite\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nother = othersuite:SUITE\n")


def test_a_suite_from_another_installed_package_runs_with_pytest(pytester: pytest.Pytester):
    """No conftest registers it: the entry point of an installed package does, and its
    one-line test file gives the usual node ids."""
    site = pytester.path / "site"
    _install_other_package(site)
    project = pytester.mkdir("project")
    (project / "test_other.py").write_text(
        "from extractbench.plugins.run.suite_test import suite_test\n\ntest_other = suite_test('other')\n"
    )
    (project / "data").mkdir()
    (project / "data" / "other.txt").write_text("colour: red\ncolour: blue\n")
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    base = [sys.executable, "-m", "pytest", "--backend", "fake", "--data-dir", "data",
            "-p", "no:cacheprovider"]  # fmt: skip

    def pytest_run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [*base, *args], cwd=project, env=env, capture_output=True, text=True, timeout=300
        )

    result = pytest_run("--report-json", "record.json", "-v", "--suite-option", "other.cue=colour:")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "test_other.py::test_other[other/0] PASSED" in result.stdout
    record = read_json(project / "record.json")
    assert record["aggregates"]["other/accuracy"]["n"] == 2
    bad = pytest_run("--suite-option", "other.cues=x")
    assert bad.returncode == pytest.ExitCode.USAGE_ERROR
    assert "unknown other option(s) cues (did you mean 'cue'?); known: cue" in bad.stderr


def test_entry_points_that_are_broken_or_misnamed_are_one_line_errors(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "brokensuite.py").write_text("raise ImportError('no such thing')\n")
    (tmp_path / "namedsuite.py").write_text(OTHER_SUITE)
    broken = EntryPoint("broken", "brokensuite:SUITE", ENTRY_POINT_GROUP)
    with pytest.raises(
        RegistryError,
        match=r"^suite entry point broken = brokensuite:SUITE: cannot be loaded: ImportError: no such thing$",
    ):
        Registry.installed(entry_points=[broken])
    misnamed = EntryPoint("wrong", "namedsuite:SUITE", ENTRY_POINT_GROUP)
    with pytest.raises(RegistryError, match="must name a Suite called 'wrong'"):
        Registry.installed(entry_points=[misnamed])
    twice = EntryPoint("other", "namedsuite:SUITE", ENTRY_POINT_GROUP)
    with pytest.raises(RegistryError, match="'other' is registered twice"):
        Registry.installed([Registry.installed(entry_points=[twice]).get("other")], [twice])


def test_the_installed_suites_are_the_papers_five_and_the_user_s_kv():
    registry = Registry.installed()
    assert registry.names == ["fda", "kv", "minea", "strucbench", "tablebench", "tableqa"]
    for suite in registry.suites.values():
        assert isinstance(suite, Suite) and suite.metric_names()
        assert (suite.folder / suite.test.split("::")[0]).is_file()
        assert suite.parse_options() == suite.options()  # every option has a default


@pytest.mark.parametrize("name", ["fda", "strucbench", "tablebench", "tableqa", "minea"])
def test_a_loader_given_no_data_folder_says_so_in_one_line(name):
    """``load(data_dir, options)`` takes ``data_dir: Path | None`` as the protocol declares:
    given None with the default options (which read the data folder) it raises DataMissing
    naming the suite's data section, never a TypeError from a path joined to None."""
    suite = Registry.installed().get(name)
    with pytest.raises(DataMissing) as caught:
        suite.load(None, suite.parse_options())
    message = str(caught.value)
    assert "no data folder" in message and f"#{name})" in message, message
    assert "\n" not in message


@pytest.mark.parametrize("name", ["fda", "strucbench", "tablebench", "tableqa", "minea"])
def test_a_suite_loads_through_the_typed_loader_of_its_items_module(name):
    """A suite names its loader (``lazy``, imported on first call); that function is its
    items module's ``LOADER``, the one the type checker holds to ``Loader[Options]``, and it
    declares ``data_dir: Path | None`` and the suite's options class, as the protocol does."""
    suite = Registry.installed().get(name)
    items = importlib.import_module(f"extractbench.suites.{name}.items")
    assert suite.load.__name__ == items.LOADER.__name__
    data_dir, options = list(inspect.signature(items.LOADER, eval_str=True).parameters.values())
    assert data_dir.annotation == Path | None and options.annotation is suite.options


@needs_data
@pytest.mark.parametrize("name", ["fda", "tablebench"])
def test_run_is_a_plain_function_without_pytest(name):
    """Benchmarks and --rescore call a suite's run directly: items in, scores out."""
    suite = Registry.installed().get(name)
    options = suite.parse_options()
    items = suite.load(DATA, options).items[:3]
    fake = FakeBackend()
    results = [suite.run(item, Models(fake, fake), options) for item in items]
    assert all(isinstance(r, ItemResult) and r.generation is not None for r in results)
    assert all(set(r.scores) <= {"accuracy", "exact_match", "rouge_l"} for r in results)
    assert all(0.0 <= v <= 1.0 for r in results for v in r.scores.values())


@needs_data
@pytest.mark.parametrize("name", ["strucbench", "minea", "fda"])
def test_item_meta_holds_facts_only_never_options(name):
    """Options reach ``run`` as its argument; no item (nor the run record's item
    entries) carries them."""
    suite = Registry.installed().get(name)
    options = suite.parse_options()
    items = suite.load(DATA, options).items
    values = dump_options(options)
    for item in items:
        # a key may share an option's name only as another fact (MINEA's needles)
        for key in set(option_names(suite.options)) & set(item.meta):
            assert item.meta[key] != values[key], (item.id, key)
        assert "extraction" not in item.meta and "options" not in item.meta
    json.dumps([dict(it.meta) for it in items])  # JSON-safe facts


def test_a_suite_run_on_request_is_selected_only_when_named():
    """``pytest suites/`` runs the papers' suites; ``kv`` (the user's own items) runs when its
    folder, its test file or one of its node ids is named."""
    registry = Registry.installed()
    root = Path(__file__).resolve().parents[1]
    names = lambda *args: [s.name for s in registry.selected(args, root)]  # noqa: E731
    assert "kv" not in names("suites") and "fda" in names("suites")
    assert names("suites/kv") == names("suites/kv/test_kv.py") == ["kv"]
    assert names("suites/kv/test_kv.py::test_kv") == ["kv"]
    assert names("suites", "suites/kv") == registry.names
