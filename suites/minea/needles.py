"""Needles (MINEA Section 5.2.1) and needle-set files.

A needle is an invented entity of a schema type: a short paragraph introducing it, and its
``name``, ``description`` and ``keywords``. A needle set is a versioned JSON Lines file:
the first line is a header, every further line one needle::

    {"format": "extractbench-needles", "version": 1, "generator": "template", "seed": 0, ...}
    {"id": "Person-000", "type": "Person", "name": "...", "description": "...",
     "keywords": ["...", ...], "paragraph": "..."}

The run record holds the file's SHA-256, so two runs are comparable only when it matches.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from extractbench.suites.files import UserFiles
from extractbench.suites.item import DataError
from extractbench.suites.jsonl import iter_jsonl

__all__ = ["Needle", "NeedleSet", "read_needles", "write_needles", "needles_text"]

FORMAT = "extractbench-needles"
VERSION = 1


@dataclass(frozen=True)
class Needle:
    """One needle.

    Attributes:
        id: unique within the set (``Person-003``).
        type: schema type it represents.
        name: the entity's name (criteria ``n`` and ``ns``).
        description: one sentence about the entity.
        keywords: 3 or more keywords (criteria ``k0.5``-``k0.7``).
        paragraph: the text infused into a haystack; it names the entity.
    """

    id: str
    type: str
    name: str
    description: str
    keywords: tuple[str, ...]
    paragraph: str

    def to_json(self) -> dict[str, Any]:
        """JSON-safe dict (keywords as a list)."""
        return {**asdict(self), "keywords": list(self.keywords)}

    @classmethod
    def from_json(cls, row: Mapping[str, Any], where: str = "") -> Needle:
        """Build from a needle line.

        Raises:
            DataError: a field missing or of the wrong type, or an empty paragraph.
        """
        try:
            needle = cls(
                id=str(row["id"]),
                type=str(row["type"]),
                name=str(row["name"]),
                description=str(row["description"]),
                keywords=tuple(str(k) for k in row["keywords"]),
                paragraph=str(row["paragraph"]),
            )
        except (KeyError, TypeError) as exc:
            raise DataError(f"{where}: needle lacks field {exc}") from None
        if not needle.paragraph.strip() or not needle.name.strip() or not needle.keywords:
            raise DataError(f"{where}: needle {needle.id} has an empty name, paragraph or keywords")
        if "\n\n" in needle.paragraph:
            raise DataError(f"{where}: needle {needle.id}: the paragraph must be one paragraph")
        return needle


@dataclass(frozen=True)
class NeedleSet:
    """A needle set as read from its file.

    Attributes:
        needles: in file order.
        header: the header line (generator, seed, schema...).
        sha256: hex SHA-256 of the file's bytes.
        path: the file.
    """

    needles: tuple[Needle, ...]
    header: dict[str, Any]
    sha256: str
    path: str


def needles_text(header: Mapping[str, Any], needles: Sequence[Needle]) -> str:
    """The file content of a needle set (header line, then one needle per line)."""
    lines = [json.dumps({"format": FORMAT, "version": VERSION, **header}, sort_keys=True)]
    lines += [json.dumps(n.to_json(), ensure_ascii=False, sort_keys=True) for n in needles]
    return "\n".join(lines) + "\n"


def write_needles(path: Path, header: Mapping[str, Any], needles: Sequence[Needle]) -> str:
    """Write a needle set; returns its SHA-256 (hex)."""
    text = needles_text(header, needles)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_needles(path: Path, limits: UserFiles | None = None) -> NeedleSet:
    """Read and check a needle-set file (within ``limits``' sizes, when given).

    Raises:
        DataError: missing file, a first line that is not this format's header, a needle
            of a newer version, a malformed needle, duplicate needle ids, or a file or
            line over its limit.
    """
    if not path.is_file():
        raise DataError(f"needle set {path} not found")
    rows = list(iter_jsonl(path, limits))
    if not rows or rows[0][1].get("format") != FORMAT:
        raise DataError(f"{path}:1: expected a header line with format {FORMAT!r}")
    header = rows[0][1]
    if header.get("version") != VERSION:
        raise DataError(f"{path}:1: needle-set version {header.get('version')}; expected {VERSION}")
    needles = tuple(Needle.from_json(row, f"{path}:{lineno}") for lineno, row in rows[1:])
    ids = [n.id for n in needles]
    if len(set(ids)) != len(ids):
        raise DataError(f"{path}: duplicate needle ids")
    if not needles:
        raise DataError(f"{path}: no needles")
    return NeedleSet(
        needles=needles,
        header=header,
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        path=str(path),
    )
