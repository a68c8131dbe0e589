"""The table of known suites: what the plugin may check before any item runs.

Each suite is known by name. The registry says where its test lives (so a command's
paths tell which suites it selects), which metrics it records (so a gate naming an
unknown suite or metric is a usage error), its options and their defaults (so a bad
``--suite-option`` is a usage error), the data files it reads (so missing data is found
before any worker starts) and its report module (so a run record can never choose a
module to import).

Suites defined outside this package (a conftest, another package) add themselves through
the ``pytest_extractbench_suites`` hook (``plugins/hookspecs.py``).
"""

from __future__ import annotations

import fnmatch
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["SuiteSpec", "Registry", "builtin_suites", "SOURCES_HINT"]

SUITES_DIR = Path(__file__).resolve().parent
SOURCES_HINT = (
    "pass --data-dir DIR or set EXTRACTBENCH_DATA to a folder laid out as "
    "../shared/data/SOURCES.md describes (fda/, strucbench/, tableqa/, minea/)"
)


@dataclass(frozen=True)
class SuiteSpec:
    """One suite as the plugin knows it before collecting it.

    Attributes:
        name: the suite name, the first part of every item id and metric key.
        folder: the folder holding the suite's test file.
        test: ``"test_file.py::test_function"`` of the suite's parametrized test.
        metrics: names (or ``fnmatch`` patterns, e.g. ``"*/h_content"``) of the metrics
            the suite records, without the ``suite/`` prefix; a callable returning them
            is resolved on first use (it may import the suite's modules).
        options: option name -> default value; None when the suite takes no options.
        data: paths (``glob`` patterns allowed) under the data dir that must exist.
        data_source: where the data is described (shown when it is missing).
        report: the module with ``summary_lines(record, suite)`` and
            ``write_artifacts(record, suite, folder, stem)``, or None.
    """

    name: str
    folder: Path
    test: str
    metrics: tuple[str, ...] | Callable[[], Iterable[str]] = ()
    options: Mapping[str, Any] | Callable[[], Mapping[str, Any]] | None = None
    data: tuple[str, ...] = ()
    data_source: str = ""
    report: str | None = None

    def metric_names(self) -> tuple[str, ...]:
        """The metric names (patterns allowed) this suite records."""
        return tuple(self.metrics() if callable(self.metrics) else self.metrics)

    def option_defaults(self) -> dict[str, Any]:
        """Option name -> default (empty when the suite takes no options)."""
        options = self.options() if callable(self.options) else self.options
        return dict(options or {})

    def knows_metric(self, metric: str) -> bool:
        """Whether ``metric`` (without the suite prefix) is one this suite records."""
        return any(fnmatch.fnmatchcase(metric, pattern) for pattern in self.metric_names())

    def reads_local_data(self, options: Mapping[str, Any] | None = None) -> bool:
        """Whether the suite reads files of the data dir: it lists some, and its ``source``
        option (where it has one) does not name data from elsewhere (a hub)."""
        return bool(self.data) and str((options or {}).get("source", "local")) == "local"

    def missing_data(
        self, data_dir: Path | None, options: Mapping[str, Any] | None = None
    ) -> list[str]:
        """The required data paths absent from ``data_dir`` (all of them when it is None);
        none when the suite does not read local data (:meth:`reads_local_data`)."""
        if not self.reads_local_data(options):
            return []
        if data_dir is None:
            return list(self.data)
        return [p for p in self.data if not any(data_dir.glob(p))]

    def report_module(self) -> ModuleType | None:
        """The suite's report module, imported from this table (never from a record)."""
        return importlib.import_module(self.report) if self.report else None


def _fda_metrics() -> tuple[str, ...]:
    return ("accuracy",)


def _strucbench_metrics() -> tuple[str, ...]:
    from suites.strucbench.errors import ERROR_TYPES
    from suites.strucbench.metrics import H_NAMES

    per_format = [
        *H_NAMES, *(f"{name}_corrected" for name in H_NAMES), "sacrebleu", "bertscore",
        "rouge_l", "parse_error", "p_content", "p_structure",
        *(f"error_{kind}" for kind in ERROR_TYPES),
    ]  # fmt: skip
    return (*(f"{fmt}/{name}" for fmt in ("raw", "html", "latex") for name in per_format),
            "pscore_parse_failures")  # fmt: skip


def _minea_metrics() -> tuple[str, ...]:
    from suites.minea.matching import CRITERIA
    from suites.minea.quality import QUALITY_METRICS

    return (*CRITERIA, *QUALITY_METRICS, "llm_false_positive", "parse_failures", "entities")


def _options(module: str, name: str = "DEFAULTS") -> Callable[[], Mapping[str, Any]]:
    return lambda: getattr(importlib.import_module(module), name)


def builtin_suites() -> list[SuiteSpec]:
    """The suites this package ships (DESIGN.md: FDA, Struc-Bench, Table QA, MINEA)."""
    wtq = "tableqa/wtq/csv/*/*.html"
    return [
        SuiteSpec(
            "fda", SUITES_DIR / "fda", "test_fda.py::test_fda", _fda_metrics,
            _options("suites.fda.items"),
            ("fda/fda_kv_labels_derived.jsonl",), "SOURCES.md section 1",
        ),
        SuiteSpec(
            "strucbench", SUITES_DIR / "strucbench", "test_strucbench.py::test_strucbench",
            _strucbench_metrics, _options("suites.strucbench.items"),
            ("strucbench/e2e/test-fixed.csv", "strucbench/scigen/test-CL.json",
             "strucbench/scigen/test-Other.json"), "SOURCES.md section 2",
        ),
        SuiteSpec(
            "tableqa", SUITES_DIR / "tableqa", "test_tableqa.py::test_tableqa",
            ("exact_match", "exact_match_normalized", "contains"),
            _options("suites.tableqa.items"), (wtq,),
            "SOURCES.md section 3", "suites.tableqa.report",
        ),
        SuiteSpec(
            "tablebench", SUITES_DIR / "tableqa", "test_tableqa.py::test_tablebench",
            ("exact_match", "rouge_l"), _options("suites.tableqa.items", "TABLEBENCH_DEFAULTS"),
            ("tableqa/tablebench/TableBench_test_886.jsonl",
             "tableqa/tablebench/TableBench_DP_official_example_54.jsonl"), "SOURCES.md section 3",
        ),
        SuiteSpec(
            "minea", SUITES_DIR / "minea", "test_minea.py::test_minea", _minea_metrics,
            _options("suites.minea.items"), ("minea/haystacks_manifest.jsonl",),
            "SOURCES.md section 4", "suites.minea.report",
        ),
    ]  # fmt: skip


@dataclass
class Registry:
    """Suites by name: the built-in ones plus those a hook added.

    Raises:
        ValueError: from :meth:`add`, when two suites share a name.
    """

    suites: dict[str, SuiteSpec] = field(default_factory=dict)

    @classmethod
    def with_builtins(cls, extra: Iterable[SuiteSpec] = ()) -> Registry:
        """The built-in suites followed by ``extra``."""
        registry = cls()
        for spec in [*builtin_suites(), *extra]:
            registry.add(spec)
        return registry

    def add(self, spec: SuiteSpec) -> None:
        """Register one suite (a name may be registered once)."""
        if spec.name in self.suites:
            raise ValueError(f"suite {spec.name!r} is registered twice")
        self.suites[spec.name] = spec

    def get(self, name: str) -> SuiteSpec | None:
        """The suite of that name, or None."""
        return self.suites.get(name)

    @property
    def names(self) -> list[str]:
        """Every registered suite name, sorted."""
        return sorted(self.suites)

    def selected(self, args: Iterable[str], invocation_dir: Path) -> list[SuiteSpec]:
        """The suites a pytest command's paths select, in registry order.

        A path selects a suite when it is the suite's folder, a folder above it, a path
        inside it, or the suite's test file; a node id (``file::function[...]``)
        selects the suite whose test function it names.

        Args:
            args: pytest's positional arguments (``config.args``: paths or node ids).
            invocation_dir: the folder pytest was started in (paths are relative to it).
        """
        chosen: list[SuiteSpec] = []
        for spec in self.suites.values():
            folder = spec.folder.resolve()
            test_file, _, function = spec.test.partition("::")
            for arg in args:
                path_text, _, rest = str(arg).partition("::")
                path = (invocation_dir / path_text).resolve()
                if path == folder or folder.is_relative_to(path):
                    chosen.append(spec)
                    break
                if path.is_relative_to(folder):
                    if path.suffix == ".py" and path.name != test_file:
                        continue
                    named = rest.split("::")[-1].split("[")[0] if rest else ""
                    if not named or named == function:
                        chosen.append(spec)
                        break
        return chosen
