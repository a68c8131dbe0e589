"""Suite options: one parser for ``[tool.extractbench.options.SUITE]`` and
``--suite-option SUITE.KEY=VALUE``, into the suite's typed ``Options`` (a frozen pydantic
model whose fields carry their type, default, range, choices and meaning). A file or folder
option is a ``Path | None`` field: its text as given (``~`` and a relative path are resolved
by the suite's reader, from the folder pytest runs in), ``""`` the same as unset."""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from extractbench.suites.item import DataError

__all__ = [
    "OptionError",
    "SuiteOptions",
    "NoOptions",
    "UserFileOptions",
    "parse_options",
    "option_names",
    "dump_options",
    "describe_options",
    "problem",
    "truthy",
]

_FALSE = ("0", "false", "no", "off")
T = TypeVar("T", bound="SuiteOptions")


class OptionError(DataError):
    """A suite option that cannot be parsed; ``key`` is the option it names (None: a
    combination of several)."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class SuiteOptions(BaseModel):
    """The base of every suite's ``Options``: frozen, unknown keys refused. A field's
    ``Field(description=...)`` is its meaning in ``extractbench suites``; its range
    (``ge``, ``le``) and choices (``Literal``) are checked when the options are parsed,
    before any item is collected."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # the option names (as written) that decide what a score means: a baseline recorded
    # with other values of them measured something else and is refused
    protocol_fields: ClassVar[tuple[str, ...]] = ()

    @property
    def uses_data_dir(self) -> bool:
        """Whether the suite reads the data folder's files with these options: True, unless a
        suite's ``Options`` override it (data named by an option: the user's own files, a
        hub's copy), so a run with them needs no data folder."""
        return True

    @field_validator("*", mode="before")
    @classmethod
    def _empty_path_is_unset(cls, value: Any, info: ValidationInfo) -> Any:
        """``""`` for a ``Path | None`` option is None (unset: ``--suite-option kv.path=``
        clears the config file's), not ``Path("")``, the folder pytest runs in."""
        field = cls.model_fields.get(info.field_name or "")
        if field is not None and _is_path(_bare(field.annotation)) and value == "":
            return None if _allows_none(field.annotation) else value
        return value


class NoOptions(SuiteOptions):
    """The options of a suite that takes none."""


class UserFileOptions(SuiteOptions):
    """The options of a suite that reads the user's own files (``kv.path``,
    ``minea.documents``, ``tableqa.tables``, ``strucbench.pairs``): where they may lie, and
    how large one may be. A file a link or a path leads out of its folder is refused (its
    text would land in the record and the reports); so is a file or a JSON Lines line
    over its limit, before the first model call, instead of minutes of collecting."""

    root: Path | None = Field(
        default=None,
        description=(
            "a wider folder your files may lie in (links and '..' resolved); unset: the "
            "folder of the file or option that names them"
        ),
    )
    max_file_mb: float = Field(default=64.0, gt=0, description="the largest of your files read, in MB")
    max_line_mb: float = Field(
        default=16.0, gt=0, description="the longest line of your JSON Lines files, in MB"
    )


def truthy(text: object) -> bool:
    """A command-line or environment value as a boolean: ``""``, ``0``, ``false``, ``no``
    and ``off`` (any case) are False, anything else True."""
    return str(text).strip().lower() not in ("", *_FALSE)


def _fields(cls: type[BaseModel]) -> dict[str, Any]:
    """Option name -> pydantic field: a field's alias is its option name (``minea.schema``
    is the field ``schema_file``: ``schema`` is a pydantic model's own attribute)."""
    return {field.alias or name: field for name, field in cls.model_fields.items()}


def option_names(cls: type[SuiteOptions]) -> tuple[str, ...]:
    """The option names of an ``Options`` model, in declaration order."""
    return tuple(_fields(cls))


def dump_options(options: SuiteOptions) -> dict[str, Any]:
    """Option name -> JSON-safe value of a parsed ``Options`` (what the run record shows; a
    path as its text)."""
    return options.model_dump(mode="json", by_alias=True)


def type_name(annotation: Any) -> str:
    """A field's type as ``extractbench suites`` and the error messages show it: ``int``,
    ``str | None``, ``path`` for a file or folder, ``a | b`` for a ``Literal`` of choices."""
    if _is_path(annotation):
        return "path"
    if typing.get_origin(annotation) is Literal:
        return " | ".join(map(str, typing.get_args(annotation)))
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in typing.get_args(annotation))
    return "None" if annotation is type(None) else getattr(annotation, "__name__", str(annotation))


def _is_path(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, PurePath)


def _allows_none(annotation: Any) -> bool:
    return type(None) in typing.get_args(annotation)


def _bare(annotation: Any) -> Any:
    """``X`` of ``X | None``; any other annotation as it is."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        return args[0]
    return annotation


def problem(error: Mapping[str, Any], cls: type[BaseModel]) -> str:
    """One pydantic error of validating ``cls`` (an item of ``ValidationError.errors()``)
    as what the value must be (``must be int``, ``must be >= 0``, ``must be one of a, b``,
    or a validator's own message)."""
    kind, ctx = str(error["type"]), error.get("ctx") or {}
    field = _fields(cls).get(str(error["loc"][0])) if error["loc"] else None
    bare = _bare(field.annotation) if field is not None else None
    if kind.startswith("bool_"):
        return "must be true or false (also 1/0, yes/no, on/off)"
    if kind == "literal_error" and bare is not None:
        return f"must be one of {', '.join(map(str, typing.get_args(bare)))}"
    bounds = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=",
              "less_than": "<"}  # fmt: skip
    if kind in bounds:
        return f"must be {bounds[kind]} {next(iter(ctx.values()))}"
    if kind.split("_")[0] in ("int", "float", "string", "path") and bare is not None:
        return f"must be {type_name(bare)}"
    return str(error["msg"]).removeprefix("Value error, ")


def parse_options(suite: str, cls: type[T], values: Mapping[str, Any] | T | None = None) -> T:
    """The suite's typed options: ``cls``'s defaults updated by ``values``.

    Strings are converted to each field's type (pydantic's lax mode):
    ``true``/``1``/``yes``/``on`` are True and ``false``/``0``/``no``/``off`` False for a
    ``bool`` (any other text is an error), numbers are parsed for ``int`` and ``float``, a
    ``Literal[...]`` field takes one of its values, ``str | None`` any string, a ``Path``
    field a path's text (not resolved; ``""`` is unset for ``Path | None``); each field's
    range (``Field(ge=..., le=...)``) and the model's own validators are checked.
    An instance of ``cls`` is returned as it is.

    Args:
        suite: the suite name (for messages).
        cls: the suite's ``Options`` (a :class:`SuiteOptions`; every field has a default).
        values: option name -> value, or None for the defaults.

    Raises:
        OptionError: an unknown key (the message lists the valid ones and the closest), a value not of its
            field's type, range or choices (one line naming ``suite.key=value``), or a
            combination the model's validators reject (``suite options: ...``).
    """
    if isinstance(values, cls):
        return values
    values = dict(values or {})
    known = option_names(cls)
    unknown = sorted(set(values) - set(known))
    if unknown:
        valid = ", ".join(known) if known else f"none (the {suite} suite takes no options)"
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise OptionError(
            f"unknown {suite} option(s) {', '.join(unknown)}{hint}; known: {valid}", unknown[0]
        )
    try:
        return cls.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        if error["loc"]:
            key = str(error["loc"][0])
            raise OptionError(
                f"{suite}.{key}={values.get(key)}: {problem(error, cls)}", key
            ) from None
        raise OptionError(f"{suite} options: {problem(error, cls)}") from None


def describe_options(cls: type[SuiteOptions]) -> list[dict[str, Any]]:
    """Every option of ``cls`` as ``extractbench suites`` lists it: ``name``, ``type``
    (:func:`type_name`), ``default`` (JSON-safe), ``range`` (``">= 0"``, ``""`` for none)
    and ``description``."""
    rows = []
    for name, field in _fields(cls).items():
        bounds = []
        for meta in field.metadata:
            for attr, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
                if getattr(meta, attr, None) is not None:
                    bounds.append(f"{sign} {getattr(meta, attr)}")
        rows.append(
            {
                "name": name,
                "type": type_name(field.annotation),
                "default": field.get_default(call_default_factory=True),
                "range": ", ".join(bounds),
                "description": field.description or "",
            }
        )
    return rows
