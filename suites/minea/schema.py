"""The extraction schema: entity types and their properties (MINEA Section 3.1).

The default schema ships as ``suites/minea/schema.json``; users extend or replace it with
``--suite-option minea.schema=PATH`` (same format)::

    {"format": "extractbench-minea-schema", "version": 1,
     "common_properties": ["name", "description", "keywords"],
     "types": {"Person": ["jobTitle", "worksFor"], ...}}
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from extractbench.suites import safe_json
from extractbench.suites.item import DataError

__all__ = ["Schema", "load_schema", "DEFAULT_SCHEMA"]

DEFAULT_SCHEMA = Path(__file__).with_name("schema.json")
FORMAT = "extractbench-minea-schema"
REQUIRED_COMMON = ("name", "description", "keywords")


@dataclass(frozen=True)
class Schema:
    """Entity types and properties.

    Attributes:
        types: type name -> its own properties (common ones excluded), in file order.
        common: properties every type has; always includes name, description, keywords.
        path: where it was read from.
    """

    types: dict[str, tuple[str, ...]]
    common: tuple[str, ...]
    path: str = ""

    def properties(self, type_name: str) -> tuple[str, ...]:
        """All properties of ``type_name`` (common first); the common ones for unknown types."""
        return self.common + self.types.get(type_name, ())

    def describe(self) -> str:
        """The schema as prompt text, one line per type: ``Person: name, ..., jobTitle``."""
        return "\n".join(f"- {t}: {', '.join(self.properties(t))}" for t in self.types)


def load_schema(path: Path | str | None = None) -> Schema:
    """Read and check a schema file (default: the shipped ``schema.json``).

    Raises:
        DataError: missing file, not JSON, wrong ``format``, no types, a type whose
            properties are not a list of strings, or common properties lacking
            name/description/keywords (the needle matching needs them).
    """
    path = Path(path) if path else DEFAULT_SCHEMA
    try:
        data = safe_json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"minea schema {path}: cannot read ({exc.strerror})") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"minea schema {path}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DataError(f"minea schema {path}: expected an object with format {FORMAT!r}")
    types = data.get("types")
    if not isinstance(types, dict) or not types:
        raise DataError(f"minea schema {path}: 'types' must map type names to property lists")
    common = data.get("common_properties", list(REQUIRED_COMMON))
    for name, props in [("common_properties", common), *types.items()]:
        if not isinstance(props, list) or not all(isinstance(p, str) and p for p in props):
            raise DataError(f"minea schema {path}: {name} must be a list of property names")
    missing = [p for p in REQUIRED_COMMON if p not in common]
    if missing:
        raise DataError(f"minea schema {path}: common_properties lack {', '.join(missing)}")
    return Schema(
        types={t: tuple(p for p in props if p not in common) for t, props in types.items()},
        common=tuple(common),
        path=str(path),
    )
