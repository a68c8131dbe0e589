"""Suite options (``--suite-option SUITE.KEY=VALUE`` and ``[tool.extractbench.options.SUITE]``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from suites.item import DataError

__all__ = ["merge_options", "truthy"]

_FALSE = ("0", "false", "no", "off")


def truthy(text: object) -> bool:
    """A command-line or environment value as a boolean: ``""``, ``0``, ``false``, ``no``
    and ``off`` (any case) are False, anything else True."""
    return str(text).strip().lower() not in ("", *_FALSE)


def merge_options(
    suite: str,
    options: Mapping[str, Any],
    defaults: Mapping[str, Any],
    choices: Mapping[str, tuple[str, ...]] | None = None,
) -> dict[str, Any]:
    """``defaults`` updated by ``options``, each value converted to its default's type.

    Command-line values arrive as strings: ``"false"``/``"0"``/``"no"``/``"off"`` are
    False for a boolean default, numbers are parsed for int and float defaults; a default
    of None takes any string (a path, say). ``choices`` names the allowed values of
    string options that take one of a fixed set.

    Raises:
        DataError: an unknown key, a value that is not of its default's type, or a value
            outside its ``choices`` (one line naming ``suite.key``).
    """
    unknown = set(options) - set(defaults)
    if unknown:
        raise DataError(
            f"unknown {suite} option(s) {', '.join(sorted(unknown))}; known: {', '.join(defaults)}"
        )
    merged = dict(defaults)
    for key, value in options.items():
        kind = type(defaults[key])
        try:
            if defaults[key] is None or kind is str:
                merged[key] = None if value is None else str(value)
            elif kind is bool:
                merged[key] = truthy(value)
            else:
                merged[key] = kind(value)
        except (TypeError, ValueError):
            raise DataError(f"{suite}.{key}={value}: must be {kind.__name__}") from None
    for key, allowed in (choices or {}).items():
        if merged[key] not in allowed:
            raise DataError(f"{suite}.{key}={merged[key]}: must be one of {', '.join(allowed)}")
    return merged
