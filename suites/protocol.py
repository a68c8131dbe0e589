"""The Suite protocol: the one shape every benchmark has.

A suite is a :class:`Suite` value, generic over its ``Options`` class: a name, what its
results are broken down by, its ``Options`` (a frozen
:class:`suites.suite_options.SuiteOptions` model, parsed once by
:func:`suites.suite_options.parse_options` from ``[tool.extractbench.options.NAME]`` and
``--suite-option``), ``load(data_dir, options) -> SuiteData`` and ``run(item, models,
options) -> ItemResult``, both given the parsed ``Options`` object, plus an optional report
and optional command-line options and ``extractbench`` commands of its own.

Suites register by name through the ``extractbench.suites`` entry-point group (see
``pyproject.toml``), so a suite can live in another package; a conftest may add one with
the ``pytest_extractbench_suites`` hook. ``run`` is a plain function: the pytest test,
``--rescore``, the benchmarks and the tests all call it, with or without pytest. Suite
code never imports pytest.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeAlias, TypeVar

from extractbench.suites.answers import first_content_stop
from extractbench.suites.item import Item, SuiteData
from extractbench.suites.model import Backend, Generation, ask
from extractbench.suites.suite_options import SuiteOptions, parse_options

__all__ = ["Suite", "Models", "ItemResult", "CommandTools", "Loader", "generate", "lazy"]

OptionsT = TypeVar("OptionsT", bound=SuiteOptions)

# A suite's loader (Suite.load): (data_dir, options) -> SuiteData, data_dir None where no
# data folder was found (a loader that reads one raises DataMissing then).
Loader: TypeAlias = Callable[[Path | None, OptionsT], SuiteData]


@dataclass(frozen=True)
class Models:
    """The models an item may call.

    Attributes:
        model: the model under test.
        judge: the judge (``--judge-model``; the model under test when none is given).
    """

    model: Backend
    judge: Backend


@dataclass
class ItemResult:
    """What running one item gives.

    Attributes:
        scores: metric name (without the ``suite/`` prefix) -> value; None for a metric
            that does not apply to this item (not aggregated).
        generation: the model's main output (prediction, tokens, latency in the record),
            or None.
        details: JSON-safe facts about the item for the run record (not aggregated).
    """

    scores: dict[str, float | None] = field(default_factory=dict)
    generation: Generation | None = None
    details: dict[str, Any] = field(default_factory=dict)


def lazy(target: str, options: type[OptionsT]) -> Loader[OptionsT]:
    """The loader ``"module:function"`` of a suite whose options class is ``options``,
    imported on its first call: a suite's declaration stays light (``pytest --help``
    imports every installed suite) while its loader imports parsers, Faker or bs4 only when
    the suite runs, and the loader's module may import the declaration (its options class)
    without an import circle. The function is checked against ``Loader[options]`` where it
    is defined (``LOADER: Loader[FdaOptions] = load_items``; the type checker in CI reads
    it), and ``tests/test_suite_protocol.py`` checks that each suite's target is that one."""
    module, _, name = target.partition(":")

    def call(data_dir: Path | None, opts: OptionsT) -> SuiteData:
        loader: Loader[OptionsT] = getattr(importlib.import_module(module), name)
        return loader(data_dir, opts)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"{target}, imported on first call ({options.__name__})."
    return call


def generate(item: Item, model: Backend) -> Generation:
    """The item's prompt through ``model`` with the item's budget, stop sequences, grammar,
    JSON Schema and system text (:meth:`suites.item.Item.request`). With
    ``item.stop_after_content`` the engine gets the stop sequences that are not whitespace only, and the text is cut at
    the first stop sequence after its first non-space character
    (:func:`suites.answers.first_content_stop`).

    Raises:
        ModelError: from the backend.
    """
    request = item.request()
    generation = ask(
        model, request.prompt, max_tokens=request.max_tokens, stop=request.stop,
        grammar=request.grammar, system=request.system, json_schema=request.json_schema,
    )  # fmt: skip
    if not item.stop_after_content:
        return generation
    return dataclasses.replace(generation, text=first_content_stop(generation.text, item.stop))


class CommandTools(Protocol):
    """What a suite's own ``extractbench`` command may ask of the harness (the command
    passes it as ``func(args, tools)``; a suite imports no backend)."""

    def load_model(self, path: str | None, seed: int, n_ctx: int) -> tuple[Backend, str]:
        """A llama.cpp model in process (``path`` None: the default model) and its name.

        Raises:
            ModelError: the file is missing, not GGUF, or does not load (one line).
        """
        ...

    def data_dir(self, option: str | None) -> Path | None:
        """The data folder (``--data-dir``, ``$EXTRACTBENCH_DATA``, else the user cache),
        or None when none is found.

        Raises:
            DataError: the folder named does not exist (one line).
        """
        ...


class OptionAdder(Protocol):
    def addoption(self, *names: str, **kwargs: Any) -> None: ...


@dataclass(frozen=True)
class Suite(Generic[OptionsT]):
    """One benchmark, generic over its ``Options`` class (``Suite[FdaOptions]``).

    Attributes:
        name: the first part of every item id and metric key (``fda``).
        folder: the folder of the suite's test file (a command's paths select suites by it).
        test: ``"test_file.py::test_function"`` of its parametrized test; pytest node ids
            and JUnit names come from it.
        load: ``(data_dir, options) -> SuiteData``, every item, deterministic (``data_dir``
            may be None where the options read no data folder).
            Raises ``DataMissing`` (files absent) or ``DataError`` (malformed).
        run: ``(item, models, options) -> ItemResult``: generate and score one item.
            Raises ``ModelError`` (the item fails).
        options: the ``Options`` model (a :class:`suites.suite_options.SuiteOptions`: a default,
            a ``Field(description=...)`` and any range or choices on every field; listed by
            ``extractbench suites``; :class:`suites.suite_options.NoOptions` for a suite that
            takes none). ``load`` and ``run`` are given an instance of it.
        breakdown: item ``meta`` keys results are broken down by (the first one
            stratifies ``--limit``).
        metrics: the metric names (``fnmatch`` patterns allowed) it records, or a callable
            returning them (resolved on first use).
        data: paths (glob patterns) under the data dir that must exist.
        data_source: where the data is described (shown when it is missing).
        report: the module with ``summary_lines(record, suite)`` and
            ``write_artifacts(record, suite, folder, stem)``, imported from here (never
            from a run record) on first use, or None.
        add_options: adds the suite's own command-line options to pytest's option group.
        cli_options: ``getoption -> {option: value}``: suite options given through those
            command-line options (MINEA: ``--needles PATH``), parsed with the others.
        commands: adds ``extractbench`` sub-commands to an argparse sub-parser set; each
            sets ``func(args, tools) -> exit status`` (``tools``: :class:`CommandTools`).
        prefetch: ``run``'s first model call is ``generate(item, models.model)`` (the
            item's own prompt, budget and stop sequences), so with ``--concurrency`` a
            group's first calls may be sent ahead together.
        ranges: ``(pattern, low, high)`` per metric whose scale is not [0, 1] (``fnmatch``
            patterns, first match wins; ``-inf``/``inf`` for an open side): a recorded
            score outside its metric's range fails the item with a named error.
        judged: the metrics (``fnmatch`` patterns) the judge model decides; on an item whose
            ``details["self_judged"]`` is true the model under test judged them itself, and
            every report marks them (``plugins.outputs.metric_facts``).
        on_request: the suite measures the user's own files named by its options (``kv``),
            so a command selects it only by naming it (its folder, test file or
            ``--pyargs`` package), never by a folder above it: ``pytest suites/`` runs the
            papers' suites.
        version: the suite's version, an integer written in the run record (``suites.NAME
            .version``) and raised by one whenever a change makes its scores incomparable
            with earlier runs' (its items, their selection, a prompt, a budget, the scoring);
            ``--baseline`` and ``extractbench compare`` refuse a baseline scored at another
            version, as lm-evaluation-harness keeps a ``VERSION`` per task.
    """

    name: str
    folder: Path
    test: str
    load: Callable[[Path | None, OptionsT], SuiteData]
    run: Callable[[Item, Models, OptionsT], ItemResult]
    options: type[OptionsT]
    breakdown: tuple[str, ...] = ()
    metrics: tuple[str, ...] | Callable[[], Iterable[str]] = ()
    data: tuple[str, ...] = ()
    data_source: str = ""
    report: str | None = None
    add_options: Callable[[OptionAdder], None] | None = None
    cli_options: Callable[[Callable[[str], Any]], dict[str, Any]] | None = None
    commands: Callable[[argparse._SubParsersAction], None] | None = None
    prefetch: bool = False
    ranges: tuple[tuple[str, float, float], ...] = ()
    judged: tuple[str, ...] = ()
    on_request: bool = False
    version: int = 1

    def score_range(self, metric: str) -> tuple[float, float]:
        """The declared range of ``metric`` (without the suite prefix): the first of
        ``ranges`` whose pattern matches, else [0, 1] (scores are in [0, 1]
        unless the source paper defines another scale)."""
        for pattern, low, high in self.ranges:
            if fnmatch.fnmatchcase(metric, pattern):
                return low, high
        return 0.0, 1.0

    def parse_options(self, values: Mapping[str, Any] | SuiteOptions | None = None) -> OptionsT:
        """The suite's typed options from ``values`` (see :func:`parse_options`): an
        instance of :attr:`options` as it is (the run's parsed options), else
        :attr:`options` parsed from ``values`` (option name -> value, None: the defaults).

        Raises:
            DataError: an unknown key, a bad value (one line naming ``suite.key``).
            TypeError: ``values`` is another suite's ``Options`` (a harness bug).
        """
        if isinstance(values, SuiteOptions) and not isinstance(values, self.options):
            raise TypeError(
                f"suite {self.name}: options of {type(values).__name__}, not {self.options.__name__}"
            )
        return parse_options(self.name, self.options, values)

    def metric_names(self) -> tuple[str, ...]:
        """The metric names (patterns allowed) this suite records."""
        return tuple(self.metrics() if callable(self.metrics) else self.metrics)

    def knows_metric(self, metric: str) -> bool:
        """Whether ``metric`` (without the suite prefix) is one this suite records."""
        return any(fnmatch.fnmatchcase(metric, pattern) for pattern in self.metric_names())

    def reads_local_data(self, options: Mapping[str, Any] | SuiteOptions | None = None) -> bool:
        """Whether the suite reads files of the data dir: it lists some, and its options
        (:meth:`parse_options` of ``options``) do not name data from elsewhere
        (:attr:`suites.suite_options.SuiteOptions.uses_data_dir`: a hub, the user's own files)."""
        parsed = self.parse_options(options)  # a bad value is an error even without data
        return bool(self.data) and parsed.uses_data_dir

    def missing_data(
        self, data_dir: Path | None, options: Mapping[str, Any] | SuiteOptions | None = None
    ) -> list[str]:
        """The required data paths absent from ``data_dir`` (all of them when it is None);
        none when the suite does not read local data (:meth:`reads_local_data`)."""
        if not self.reads_local_data(options):
            return []
        if data_dir is None:
            return list(self.data)
        return [p for p in self.data if not any(data_dir.glob(p))]

    def summary_lines(self, record: dict[str, Any]) -> list[str]:
        """The suite's own terminal lines for a run record (none without a report)."""
        if self.report is None:
            return []
        return list(importlib.import_module(self.report).summary_lines(record, self.name))

    def write_artifacts(self, record: dict[str, Any], folder: Path, stem: str) -> list[Path]:
        """Write the suite's own files (tables, heatmaps) next to the run record."""
        if self.report is None:
            return []
        module = importlib.import_module(self.report)
        return list(module.write_artifacts(record, self.name, folder, stem))
