"""Reading and writing run records: load and validate (version 1 records migrated), dump,
and the JSON Schema generated from the models (``extractbench schema`` prints it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from extractbench.plugins.record.models import READABLE_VERSIONS, SCHEMA_VERSION, RunRecord
from extractbench.suites import safe_json

__all__ = ["RecordError", "parse_record", "load_record", "dump_record", "record_schema"]


class RecordError(Exception):
    """A run record cannot be read: missing, damaged, of another schema version, or a field
    of the wrong type (the message names the file, the field and the expected type)."""


_TYPES = {
    "string_type": "a string", "int_type": "an integer", "int_parsing": "an integer",
    "float_type": "a number", "float_parsing": "a number", "bool_type": "true or false",
    "bool_parsing": "true or false", "list_type": "an array", "dict_type": "an object",
    "model_type": "an object", "literal_error": "one of the allowed words",
    "missing": "present", "extra_forbidden": "absent (not a field of this schema)",
}  # fmt: skip


def _json_type(value: Any) -> str:
    return {
        str: "string", bool: "boolean", int: "integer", float: "number", list: "array",
        dict: "object", type(None): "null",
    }.get(type(value), type(value).__name__)  # fmt: skip


def parse_record(data: Any, where: str = "run record") -> RunRecord:
    """Validate JSON data as a run record.

    Raises:
        RecordError: not an object with a readable ``schema_version``, a version this
            extractbench cannot read, or a field of the wrong type (``field items[3].scores
            is string 'x', expected an object``).
    """
    if not isinstance(data, dict) or "schema_version" not in data:
        raise RecordError(f"{where}: not an extractbench run record (no schema_version)")
    version = data["schema_version"]
    if type(version) is not int:
        raise RecordError(
            f"{where}: field schema_version is {_json_type(version)} {version!r}, expected "
            f"an integer ({SCHEMA_VERSION!r})"
        )
    if version not in READABLE_VERSIONS:
        raise RecordError(
            f"{where}: run record schema version {version}, this extractbench reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}"
        )
    if version == 1:
        data = _from_version_1(data)
    try:
        return RunRecord.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"]).lstrip(
            "."
        )
        expected = _TYPES.get(error["type"], error["msg"])
        got = error.get("input")
        shown = "" if error["type"] in ("missing",) else f" is {_json_type(got)} {got!r:.60}"
        raise RecordError(f"{where}: field {field}{shown}, expected {expected}") from None


def _from_version_1(data: dict[str, Any]) -> dict[str, Any]:
    """A version-1 record in version 2's shape: its selection facts stood at the top level
    (``suites_skipped``, ``subset``, ``settings.shard``)."""
    data = dict(data)
    subset: dict[str, Any] = data["subset"] if isinstance(data.get("subset"), dict) else {}
    settings: dict[str, Any] = data["settings"] if isinstance(data.get("settings"), dict) else {}
    data.setdefault(
        "selection",
        {
            "suites": sorted(data.get("suites") or {}),
            "skipped": data.get("suites_skipped") or {},
            "deselected": subset.get("items_deselected") or {},
            "allow_subset": bool(subset.get("allowed")),
            "shard": settings.get("shard"),
        },
    )
    return data


def load_record(path: Path) -> RunRecord:
    """Read and validate the run record at ``path`` (see :func:`parse_record`).

    Raises:
        RecordError: the file is missing, not UTF-8 JSON, or not a valid run record; the
            message names the file.
    """
    try:
        data = safe_json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise RecordError(f"{path}: no such run record") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{path}: not a readable JSON run record ({exc})") from exc
    return parse_record(data, str(path))


def dump_record(record: RunRecord) -> str:
    """The record as indented UTF-8 JSON text (no NaN: every value was made JSON-safe
    when recorded).

    Raises:
        ValueError: a non-finite number slipped through.
    """
    return json.dumps(record.as_dict(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def record_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a run record, generated from :class:`RunRecord`."""
    schema = RunRecord.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://extractbench.invalid/run-record/v{SCHEMA_VERSION}.json"
    schema["title"] = "extractbench run record"
    return schema
