"""Gates, item caps and suite options from configuration: the config file pytest itself
loaded, ``--gates-file``, ``--gate`` and ``--suite-option``.

``[tool.extractbench]`` (``gates``, ``limits``, ``options.<suite>``) is read from the
``pyproject.toml`` pytest loaded as its configuration (``config.inipath``), never from a
fixed place: ``pytest -c other.ini`` and ``--rootdir`` do not drop or swap the gates
silently. Any config file may also list gates under the ini option ``extractbench_gates``
(``[pytest]`` of pytest.ini or tox.ini, ``[tool.pytest.ini_options]``). A project
``pyproject.toml`` whose gates this run does not apply is named in a warning.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extractbench.plugins.run.project_table import (
    ProjectTable,
    SettingsError,
    project_table,
    read_project_table,
    top_level_gates,
)
from extractbench.plugins.verdict.counts import DATA_FIGURES
from extractbench.plugins.verdict.gates import Gate, GateError, gates_from_config, parse_gate
from extractbench.plugins.verdict.speed import SPEED_METRICS
from extractbench.suites.files import path_kind
from extractbench.suites.item import DataError
from extractbench.suites.registry import Registry
from extractbench.suites.suite_options import (
    OptionError,
    SuiteOptions,
    describe_options,
    dump_options,
)

__all__ = [
    "Settings",
    "SettingsError",
    "ProjectTable",
    "project_table",
    "read_project_table",
    "read_settings",
    "parse_suite_options",
    "typed_suite_options",
    "project_defaults",
    "project_suites",
    "unknown_gates",
    "unknown_limits",
    "unknown_listed_suites",
    "project_pyprojects",
]


@dataclass(frozen=True)
class Settings:
    """What a run takes from configuration.

    Attributes:
        gates: the config file's gates, then ``--gates-file``'s, then ``--gate``'s.
        limits: suite -> default item cap when ``--limit`` is not given.
        suite_options: suite -> {key: value}: the config file's, overridden by
            ``--suite-option`` (parsed into each suite's typed options by
            :func:`typed_suite_options`).
        gates_from: where gates were looked for, one line each (the record keeps it).
        warnings: configuration this run does not apply although a project declares it.
        stop_when_decided: ``[tool.extractbench] stop_when_decided = true``.
        options_from: ``suite.key`` -> where a suite option was given, for its messages
            (``pyproject.toml [tool.extractbench.options.kv]``; absent: ``--suite-option``).
        suites: ``[tool.extractbench] suites``: the suites a command over the whole suites
            package runs; None: all of them.
        suites_from: the file that lists ``suites`` (for messages).
    """

    gates: list[Gate] = field(default_factory=list)
    limits: dict[str, int] = field(default_factory=dict)
    suite_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    gates_from: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    stop_when_decided: bool = False
    options_from: dict[str, str] = field(default_factory=dict)
    suites: tuple[str, ...] | None = None
    suites_from: str = ""

    @property
    def configured(self) -> frozenset[str]:
        """The suites the configuration names: a gate on them, or options given for them
        (a user's data: ``kv.path``). A command that selects the whole suites package runs
        each of them, those run on request included."""
        return frozenset({gate.suite for gate in self.gates} | set(self.suite_options))


def parse_suite_options(texts: Sequence[str]) -> dict[str, dict[str, str]]:
    """``["tableqa.per_cell=1"]`` -> ``{"tableqa": {"per_cell": "1"}}``.

    Raises:
        SettingsError: an entry is not ``SUITE.KEY=VALUE``.
    """
    out: dict[str, dict[str, str]] = {}
    for text in texts:
        name, sep, value = text.partition("=")
        suite, dot, key = name.strip().partition(".")
        if not sep or not dot or not suite or not key:
            raise SettingsError(
                f"--suite-option {text!r}: expected SUITE.KEY=VALUE, e.g. tableqa.language=ru"
            )
        out.setdefault(suite, {})[key] = value.strip()
    return out


def project_defaults(place: Path) -> tuple[dict[str, int], dict[str, dict[str, Any]]]:
    """The default item caps and suite options of the nearest ``pyproject.toml`` at or
    above ``place`` (what ``extractbench suites`` shows; a run reads the file pytest loads).

    Raises:
        SettingsError: unreadable TOML, or an invalid ``[tool.extractbench]``.
    """
    found = project_pyprojects([place])
    if not found:
        return {}, {}
    table = read_project_table(found[0])
    return dict(table.limits), {s: dict(v) for s, v in table.options.items()}


def project_suites(place: Path) -> tuple[str, ...] | None:
    """``[tool.extractbench] suites`` of the nearest ``pyproject.toml`` at or above
    ``place`` (None: it lists none, so every suite runs).

    Raises:
        SettingsError: unreadable TOML, or an invalid ``[tool.extractbench]``.
    """
    found = project_pyprojects([place])
    listed = read_project_table(found[0]).suites if found else None
    return tuple(listed) if listed is not None else None


def project_pyprojects(places: Iterable[Path]) -> list[Path]:
    """The nearest ``pyproject.toml`` at or above each of ``places`` (where pytest would
    look for a config), without duplicates."""
    found: list[Path] = []
    for place in places:
        for folder in [place.resolve(), *place.resolve().parents]:
            candidate = folder / "pyproject.toml"
            if candidate.is_file():
                if candidate not in found:
                    found.append(candidate)
                break
    return found


def read_settings(
    inipath: Path | None,
    ini_gates: Sequence[str],
    cli_gates: Sequence[str],
    gates_file: Path | None,
    cli_options: Sequence[str],
    projects: Sequence[Path] = (),
    suite_flags: Mapping[str, Mapping[str, Any]] | None = None,
) -> Settings:
    """Read the run's configuration (see the module docstring).

    Args:
        inipath: the config file pytest loaded (``config.inipath``), or None.
        ini_gates: the ini option ``extractbench_gates`` (one gate per line).
        cli_gates: ``--gate`` expressions.
        gates_file: ``--gates-file``: a TOML file with ``[tool.extractbench.gates]`` or
            ``[gates]``.
        cli_options: ``--suite-option`` texts.
        projects: ``pyproject.toml`` files near the command (a warning names any whose
            ``[tool.extractbench]`` this run does not apply).
        suite_flags: suite -> {key: value} given through a suite's own command-line
            options (MINEA's ``--needles``); they override ``--suite-option``.

    Raises:
        SettingsError: unreadable TOML, a limit that is not a positive integer, a bad
            ``--suite-option``, a ``--gates-file`` that is missing or has no gate;
            :class:`plugins.verdict.gates.GateError` for a bad gate.
    """
    loaded = inipath.resolve() if inipath is not None else None
    table = ProjectTable()
    if loaded is not None and loaded.suffix == ".toml":
        table = read_project_table(loaded)
    source = str(loaded) if loaded else "no config file"
    gates = gates_from_config(table.gates, source=source)
    gates += [
        parse_gate(text, f"{source} extractbench_gates") for text in ini_gates if text.strip()
    ]
    gates_from = [f"{source}: {len(gates)} gates"]
    if gates_file is not None:
        if not gates_file.is_file():
            kind = path_kind(gates_file)
            what = "no such file" if kind is None else f"is a {kind}, not a file"
            raise SettingsError(
                f"--gates-file {gates_file}: {what}; give a TOML file with "
                "[tool.extractbench.gates] or [gates] (a project's pyproject.toml)"
            )
        path = gates_file.resolve()
        file_table = read_project_table(path).gates or top_level_gates(path)
        if not file_table:
            raise SettingsError(
                f"--gates-file {gates_file}: no [tool.extractbench.gates] or [gates] table"
            )
        found = gates_from_config(file_table, source=str(path))
        gates += found
        gates_from.append(f"--gates-file {path}: {len(found)} gates")
    gates += [parse_gate(text, "--gate") for text in cli_gates]
    if cli_gates:
        gates_from.append(f"--gate: {len(cli_gates)} gates")
    limits = dict(table.limits)
    options = {suite: dict(values) for suite, values in table.options.items()}
    options_from = {
        f"{suite}.{key}": f"{source} [tool.extractbench.options.{suite}]"
        for suite, values in options.items()
        for key in values
    }
    for suite, values in parse_suite_options(cli_options).items():
        options.setdefault(suite, {}).update(values)
        for key in values:
            options_from.pop(f"{suite}.{key}", None)
    for suite, flags in (suite_flags or {}).items():
        if flags:
            options.setdefault(suite, {}).update(flags)
    warnings = []
    applied = {loaded, gates_file.resolve() if gates_file is not None else None}
    for project in projects:
        if project.resolve() in applied:
            continue
        declared = read_project_table(project)
        if declared.gates:
            names = ", ".join(g.expression for g in gates_from_config(declared.gates, str(project)))
            warnings.append(
                f"{project} declares gates ({names}) and [tool.extractbench] settings that this "
                f"run does not apply: pytest loaded {source}; run with -c {project} or "
                f"--gates-file {project}"
            )
    listed = tuple(table.suites) if table.suites is not None else None
    return Settings(
        gates, limits, options, gates_from, warnings, table.stop_when_decided, options_from,
        listed, source,
    )


def unknown_gates(gates: Sequence[Gate], registry: Registry) -> list[str]:
    """A gate must name a registered suite and one of its metrics or speed figures
    (``FDA/accuracy`` or ``fda/acuracy`` would otherwise never be evaluated; a speed figure
    has no interval to gate): one line per one that does not."""
    problems = []
    known = ", ".join(registry.names)
    for gate in gates:
        suite, _, metric = gate.metric.partition("/")
        spec = registry.get(suite)
        where = f"gate {gate.expression} ({gate.source})"
        if spec is None:
            problems.append(f"{where}: unknown suite {suite!r}; known suites: {known}")
        elif metric in (*SPEED_METRICS, *DATA_FIGURES) and gate.stat in ("ci_low", "ci_high"):
            problems.append(f"{where}: {metric} is a count or a speed figure, without a 95% CI; "
                            "gate its value")  # fmt: skip
        elif (metric or gate.stat != "n") and not (
            spec.knows_metric(metric) or metric in SPEED_METRICS or metric in DATA_FIGURES
        ):
            problems.append(
                f"{where}: suite {suite} has no metric {metric!r}; its metrics: "
                f"{', '.join(spec.metric_names())}; figures: {', '.join(SPEED_METRICS + DATA_FIGURES)}"
            )
    return problems


def _unknown_suites(
    names: Iterable[str], where: Callable[[str], str], registry: Registry
) -> list[str]:
    """One line per name in ``names`` that is no registered suite, prefixed by
    ``where(name)``, with the closest registered name and the known ones."""
    known = ", ".join(registry.names)
    return [
        f"{where(name)}: unknown suite {name!r}"
        + (
            f" (did you mean {close[0]!r}?)"
            if (close := difflib.get_close_matches(name, registry.names, n=1))
            else ""
        )
        + f"; known suites: {known}"
        for name in names
        if registry.get(name) is None
    ]


def unknown_limits(limits: Mapping[str, int], registry: Registry) -> list[str]:
    """A default item cap must name a registered suite (``fdaa = 100`` would otherwise run
    the whole suite): one line per one that does not."""
    return _unknown_suites(limits, lambda name: f"[tool.extractbench.limits] {name}", registry)


def _outside_project(
    suite: str, options: SuiteOptions, options_from: Mapping[str, str], project: Path | None
) -> list[str]:
    """A file or folder option a project's pyproject gives (``kv.path``) must lie in that
    project's folder, as the documents it names lie in its own folder: one line per option
    that resolves outside it (links and ``..`` followed), unless the suite's ``root`` names
    a wider folder."""
    if project is None or getattr(options, "root", None) is not None:
        return []
    base = project.resolve()
    given = dump_options(options)
    kinds = {row["name"]: row["type"] for row in describe_options(type(options))}
    problems = []
    for key, value in given.items():
        where = options_from.get(f"{suite}.{key}")
        if where is None or not value or not kinds.get(key, "").startswith("path"):
            continue
        target = Path(str(value)).expanduser().resolve()
        if not target.is_relative_to(base):
            problems.append(
                f"{where}: {key} = {str(value)!r} is outside the project folder {base} (it "
                f"resolves to {target}); keep the file in the project, or name a wider "
                f"folder with {suite}.root"
            )
    return problems


def unknown_listed_suites(settings: Settings, registry: Registry) -> list[str]:
    """``[tool.extractbench] suites`` must name registered suites (a typo would otherwise
    run nothing of the team's): one line per one that does not."""
    where = f"{settings.suites_from} [tool.extractbench] suites"
    return _unknown_suites(settings.suites or (), lambda _: where, registry)


def typed_suite_options(
    values: Mapping[str, Mapping[str, Any]],
    registry: Registry,
    options_from: Mapping[str, str] | None = None,
    project: Path | None = None,
) -> tuple[dict[str, SuiteOptions], list[str]]:
    """Every registered suite's ``Options`` object, each parsed once from ``values``.

    Args:
        values: suite -> {key: value}; options_from: where each ``suite.key`` was given
            (:attr:`Settings.options_from`), named in its problem line.
        project: the folder of the pyproject the options were read from: a file option
            it gives must lie there (:func:`_outside_project`).

    Returns:
        ``(suite -> Options, problems)``: a problem line per unknown suite, unknown key or
        bad value (``--suite-option tableqa.per_cell=x: must be int``); a suite with a bad
        value is left out.
    """
    problems = []
    known = ", ".join(registry.names)
    for suite in values:
        if registry.get(suite) is None:
            problems.append(
                f"--suite-option {suite}.*: unknown suite {suite!r}; known suites: {known}"
            )
    typed: dict[str, SuiteOptions] = {}
    for name, spec in registry.suites.items():
        try:
            typed[name] = spec.parse_options(values.get(name))
            problems += _outside_project(name, typed[name], options_from or {}, project)
        except OptionError as exc:
            where = (options_from or {}).get(f"{name}.{exc.key}", "--suite-option")
            problems.append(f"{where}: {exc}" if where != "--suite-option" else f"{where} {exc}")
        except DataError as exc:
            problems.append(f"--suite-option {exc}")
    return typed, problems


__all__ += ["GateError"]
