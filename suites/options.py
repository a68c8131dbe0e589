"""Suite options: one parser for ``[tool.extractbench.options.SUITE]`` and
``--suite-option SUITE.KEY=VALUE``, into the suite's typed ``Options`` (a frozen dataclass)."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar

from extractbench.suites.item import DataError

__all__ = ["NoOptions", "parse_options", "option_names", "truthy"]

_FALSE = ("0", "false", "no", "off")
_TRUE = ("1", "true", "yes", "on")
T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """The options of a suite that takes none."""


def truthy(text: object) -> bool:
    """A command-line or environment value as a boolean: ``""``, ``0``, ``false``, ``no``
    and ``off`` (any case) are False, anything else True."""
    return str(text).strip().lower() not in ("", *_FALSE)


def _boolean(suite: str, key: str, value: object) -> bool:
    """A boolean suite option: one of true/false, 1/0, yes/no, on/off (any case); a typo
    such as ``minea.control=flase`` is an error, never True."""
    text = str(value).strip().lower()
    if text not in (*_TRUE, *_FALSE):
        raise DataError(f"{suite}.{key}={value}: must be true or false (also 1/0, yes/no, on/off)")
    return text in _TRUE


def option_names(cls: type) -> tuple[str, ...]:
    """The option names of an ``Options`` dataclass, in declaration order."""
    return tuple(f.name for f in dataclasses.fields(cls))


def _convert(suite: str, key: str, value: Any, kind: Any) -> Any:
    """``value`` (a string from the command line, or a TOML value) as type ``kind``."""
    args = typing.get_args(kind)
    if typing.get_origin(kind) is Literal:
        if str(value) not in args:
            raise DataError(f"{suite}.{key}={value}: must be one of {', '.join(map(str, args))}")
        return str(value)
    if typing.get_origin(kind) in (typing.Union, types.UnionType) and type(None) in args:
        if value is None:
            return None
        (kind,) = [a for a in args if a is not type(None)]
    try:
        if kind is bool:
            return value if isinstance(value, bool) else _boolean(suite, key, value)
        if kind is str:
            return str(value)
        return kind(value)
    except (TypeError, ValueError):
        raise DataError(f"{suite}.{key}={value}: must be {kind.__name__}") from None


def parse_options(suite: str, cls: type[T], values: Mapping[str, Any] | T | None = None) -> T:
    """The suite's typed options: ``cls``'s defaults updated by ``values``.

    Strings are converted to each field's type: ``"true"``/``"1"``/``"yes"``/``"on"`` are
    True and ``"false"``/``"0"``/``"no"``/``"off"`` False for a ``bool`` (any other text is
    an error), numbers are parsed for ``int`` and ``float``, a ``Literal[...]``
    field takes one of its values, ``str | None`` any string. An instance of ``cls`` is
    returned as it is.

    Args:
        suite: the suite name (for messages).
        cls: the suite's ``Options`` frozen dataclass (every field has a default).
        values: option name -> value, or None for the defaults.

    Raises:
        DataError: an unknown key (the message lists the valid ones), a value not of its
            field's type or not one of its choices (one line naming ``suite.key``), or a
            combination the dataclass's ``__post_init__`` rejects.
    """
    if isinstance(values, cls):
        return values
    values = dict(values or {})
    known = option_names(cls)
    unknown = sorted(set(values) - set(known))
    if unknown:
        valid = ", ".join(known) if known else f"none (the {suite} suite takes no options)"
        raise DataError(f"unknown {suite} option(s) {', '.join(unknown)}; known: {valid}")
    hints = typing.get_type_hints(cls)
    converted = {key: _convert(suite, key, value, hints[key]) for key, value in values.items()}
    try:
        return cls(**converted)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{suite} options: {exc}") from None
