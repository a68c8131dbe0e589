"""``[tool.extractbench]`` of a TOML file, read and validated whole: the one reader of
every config source (the config file pytest loaded, ``--gates-file``, the project files a
run warns about, ``extractbench suites``). An unknown key or a value of the wrong type is
one line naming it, with a close match for a typo.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, ValidationError

from extractbench.suites.model import SettingsError

__all__ = [
    "SettingsError",
    "ProjectTable",
    "project_table",
    "read_project_table",
    "top_level_gates",
]


class ProjectTable(BaseModel):
    """``[tool.extractbench]`` of a TOML file, read and validated whole: an unknown key or
    table, or a value of the wrong type, is one line (exit 4), so a typo (``gatez``) never
    drops a release gate.

    Attributes:
        gates: ``"suite/metric[:stat]" = "<op> NUMBER"`` (:func:`gates_from_config`).
        limits: suite -> default item cap (a positive integer).
        options: suite -> its options' table (each parsed by the suite's typed options).
        stop_when_decided: end each gated suite once its gates are decided
            (``--stop-when-decided``'s default).
        suites: the suites a command over the whole suites package runs (``pytest
            --pyargs extractbench.suites``); None: every suite (those run on request
            when configured). A command that names a suite's package runs it anyway.
    """

    model_config = ConfigDict(extra="forbid", strict=True)

    gates: dict[str, str] = Field(default_factory=dict)
    limits: dict[str, PositiveInt] = Field(default_factory=dict)
    options: dict[str, dict[str, Any]] = Field(default_factory=dict)
    stop_when_decided: bool = False
    suites: list[str] | None = Field(default=None, min_length=1)


# what each key holds, and each of its entries, for the one-line message
_EXPECTED = {
    "gates": ("a table of gates, e.g. [tool.extractbench.gates]", "a string such as '>= 0.25'"),
    "limits": (
        "a table of default item caps, e.g. [tool.extractbench.limits]",
        "a positive integer such as 100",
    ),
    "options": (
        "a table of suite tables, e.g. [tool.extractbench.options.kv]",
        "a table of the suite's options",
    ),
    "stop_when_decided": ("true or false", ""),
    "suites": ('a non-empty list of suite names, e.g. ["kv"]', 'a suite name such as "kv"'),
}


def _problem(error: Mapping[str, Any], table: Mapping[str, Any]) -> str:
    """One line for one of pydantic's errors in ``[tool.extractbench]``."""
    loc = [str(part) for part in error["loc"]]
    key = loc[0] if loc else ""
    if error["type"] == "extra_forbidden":
        known = list(ProjectTable.model_fields)
        close = difflib.get_close_matches(key, known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"unknown key {key!r}{hint}; known keys: {', '.join(known)}"
    whole, entry = _EXPECTED[key]
    if len(loc) == 1:
        return f"{key} = {table.get(key)!r}: must be {whole}"
    value: Any = table
    for part in loc[:2]:
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]  # an entry of a list (suites)
        else:
            value = value.get(part) if isinstance(value, Mapping) else None
    return f"{key}.{loc[1]} = {value!r}: must be {entry}"


def top_level_gates(path: Path) -> dict[str, str]:
    """A gates file's top-level ``[gates]`` table (where it has no
    ``[tool.extractbench.gates]``), validated as ``[tool.extractbench]``'s.

    Raises:
        SettingsError: see :func:`project_table`.
    """
    gates = _toml(path).get("gates", {})
    return project_table({"gates": gates}, str(path), heading="(top level)").gates


def project_table(table: Any, source: str, heading: str = "[tool.extractbench]") -> ProjectTable:
    """``[tool.extractbench]`` (a TOML table already read) as a :class:`ProjectTable`.

    Raises:
        SettingsError: ``SOURCE [tool.extractbench]: ...`` naming the first unknown key
            (with a close match) or wrong value.
    """
    if not isinstance(table, Mapping):
        raise SettingsError(f"{source}: tool.extractbench = {table!r}: must be a table")
    try:
        return ProjectTable.model_validate(dict(table))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise SettingsError(f"{source} {heading}: {_problem(first, table)}") from None


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: cannot be read as TOML ({exc})") from None


def read_project_table(path: Path) -> ProjectTable:
    """The validated ``[tool.extractbench]`` of the TOML file ``path`` (empty when it has
    none): the one reader of every config source (the file pytest loaded, ``--gates-file``,
    the project files a run warns about, ``extractbench suites``).

    Raises:
        SettingsError: unreadable TOML, or see :func:`project_table`.
    """
    tool = _toml(path).get("tool", {})
    table = tool.get("extractbench", {}) if isinstance(tool, Mapping) else {}
    return project_table(table, str(path))
