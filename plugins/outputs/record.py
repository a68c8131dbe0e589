"""The JSON run record: one file per run, from which every other report is rendered."""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from suites.files import atomic_write

__all__ = [
    "item_counts",
    "SCHEMA_VERSION", "new_run_id", "write_record", "remove_stale", "read_record", "RecordError",
]  # fmt: skip

SCHEMA_VERSION = 1


class RecordError(Exception):
    """A run record cannot be read: missing, damaged, or of another schema version."""


def new_run_id(now: datetime | None = None) -> str:
    """A sortable unique run id such as ``20261122T104500Z-3f9a1c``."""
    now = now or datetime.now(UTC)
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def write_record(record: dict[str, Any], path: Path) -> Path:
    """Write ``record`` as indented UTF-8 JSON, atomically (temp file + rename).

    A reader never sees a half-written file, even when the run is killed while writing.

    Raises:
        OSError: the folder cannot be created or written.
        ValueError: the record holds a non-finite number (not JSON).
    """
    text = json.dumps(record, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    return atomic_write(path, text)


def remove_stale(path: Path) -> str:
    """After a failed write: remove an earlier run's record at ``path``, so no reader
    takes it for this run's. Returns one line saying what became of it."""
    try:
        path.unlink()
    except (FileNotFoundError, NotADirectoryError):
        return "no file was left there"
    except OSError as exc:
        return (
            f"THE FILE AT {path} IS AN EARLIER RUN'S RECORD and could not be removed "
            f"({exc.strerror or exc})"
        )
    return "the earlier run's record that was there has been removed"


def read_record(path: Path) -> dict[str, Any]:
    """Read a run record and check its schema version.

    Raises:
        RecordError: the file is missing, not JSON, not a run record, or of another
            schema version; the message names the file.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise RecordError(f"{path}: no such run record") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecordError(f"{path}: not a readable JSON run record ({exc})") from exc
    if not isinstance(data, dict) or "schema_version" not in data:
        raise RecordError(f"{path}: not an extractbench run record (no schema_version)")
    version = data["schema_version"]
    if type(version) is not type(SCHEMA_VERSION):
        raise RecordError(
            f"{path}: field schema_version is {type(version).__name__} {version!r}, expected "
            f"{type(SCHEMA_VERSION).__name__} {SCHEMA_VERSION!r}"
        )
    if version != SCHEMA_VERSION:
        raise RecordError(
            f"{path}: run record schema version {version}, this extractbench reads version "
            f"{SCHEMA_VERSION}"
        )
    for field, kind in _FIELD_TYPES.items():
        if field in data and not isinstance(data[field], kind):
            raise RecordError(
                f"{path}: field {field} is {type(data[field]).__name__}, expected "
                f"{_TYPE_NAMES[kind]}"
            )
    for n, item in enumerate(data.get("items", [])):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise RecordError(f"{path}: field items[{n}] is not an object with a string id")
        if not isinstance(item.get("scores", {}), dict):
            raise RecordError(f"{path}: field items[{n}].scores is not an object")
    return data


# the top-level fields every reader relies on, and their JSON types
_FIELD_TYPES: dict[str, type] = {
    "run_id": str, "complete": bool, "items": list, "gates": list, "model": dict,
    "settings": dict, "suites": dict, "counts": dict, "aggregates": dict, "crashes": list,
}  # fmt: skip
_TYPE_NAMES = {str: "a string", bool: "true or false", list: "an array", dict: "an object"}


def item_counts(items: list[dict[str, Any]], expected: int) -> dict[str, int]:
    """The record's ``counts``: items finished, ``expected`` (selected), scored (passed),
    failed, model calls logged, and those the cache or a record answered."""
    scored = sum(1 for it in items if it.get("outcome") == "passed")
    calls = [c for it in items for c in it.get("calls", [])]
    return {
        "items": len(items),
        "expected": expected,
        "scored": scored,
        "failed": len(items) - scored,
        "calls": len(calls),
        "cached_calls": sum(bool(c.get("cached", False)) for c in calls),
    }
