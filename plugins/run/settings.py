"""``[tool.extractbench]`` in pyproject.toml and the options that extend it."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plugins.verdict.gates import Gate, gates_from_config, parse_gate
from suites.item import DataError
from suites.registry import Registry

__all__ = ["Settings", "SettingsError", "read_settings", "parse_suite_options", "check_settings"]


class SettingsError(ValueError):
    """pyproject.toml or an option holds a value the harness cannot use."""


@dataclass(frozen=True)
class Settings:
    """What a run takes from configuration.

    Attributes:
        gates: pyproject gates followed by ``--gate`` ones.
        limits: suite -> default item cap when ``--limit`` is not given.
        suite_options: suite -> {key: value}, pyproject values overridden by
            ``--suite-option``.
    """

    gates: list[Gate] = field(default_factory=list)
    limits: dict[str, int] = field(default_factory=dict)
    suite_options: dict[str, dict[str, Any]] = field(default_factory=dict)


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


def read_settings(
    pyproject: Path, cli_gates: Sequence[str], cli_options: Sequence[str]
) -> Settings:
    """Read ``[tool.extractbench]`` (``gates``, ``limits``, ``options.<suite>``) and merge options.

    Raises:
        SettingsError: unreadable TOML, a limit that is not a positive integer, a bad
            ``--suite-option``; :class:`plugins.gates.GateError` for a bad gate.
    """
    table: dict[str, Any] = {}
    if pyproject.is_file():
        try:
            table = (
                tomllib.loads(pyproject.read_text(encoding="utf-8"))
                .get("tool", {})
                .get("extractbench", {})
            )
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise SettingsError(f"{pyproject}: cannot read [tool.extractbench] ({exc})") from None
    gates = gates_from_config(table.get("gates", {}), source=pyproject.name)
    gates += [parse_gate(text, "--gate") for text in cli_gates]
    limits = {}
    for suite, value in table.get("limits", {}).items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise SettingsError(
                f"{pyproject} [tool.extractbench.limits]: {suite} = {value!r} must be a positive integer"
            )
        limits[suite] = value
    options: dict[str, dict[str, Any]] = {s: dict(v) for s, v in table.get("options", {}).items()}
    for suite, values in parse_suite_options(cli_options).items():
        options.setdefault(suite, {}).update(values)
    return Settings(gates=gates, limits=limits, suite_options=options)


def check_settings(settings: Settings, registry: Registry) -> list[str]:
    """What in the settings names something the registry does not know, one line each.

    A gate must name a registered suite and one of its metrics (``FDA/accuracy`` or
    ``fda/acuracy`` would otherwise never be evaluated); a suite option must name a
    registered suite, one of its options, and a value of the option's type.

    Returns:
        The problems (empty when the settings are usable).
    """
    problems = []
    known = ", ".join(registry.names)
    for gate in settings.gates:
        suite, _, metric = gate.metric.partition("/")
        spec = registry.get(suite)
        if spec is None:
            problems.append(
                f"gate {gate.expression} ({gate.source}): unknown suite {suite!r}; known suites: {known}"
            )
        elif not spec.knows_metric(metric):
            problems.append(
                f"gate {gate.expression} ({gate.source}): suite {suite} has no metric {metric!r}; "
                f"its metrics: {', '.join(spec.metric_names())}"
            )
    for suite, values in settings.suite_options.items():
        spec = registry.get(suite)
        if spec is None:
            problems.append(
                f"--suite-option {suite}.*: unknown suite {suite!r}; known suites: {known}"
            )
            continue
        try:
            spec.parse_options(values)
        except DataError as exc:
            problems.append(f"--suite-option {exc}")
    return problems
