"""``--export FORMAT=PATH`` and ``--ctrf PATH``: the run record in formats other tools read.

The exports are documents of :func:`plugins.outputs.write_outputs` like JUnit and HTML,
rendered from the decided record (:mod:`plugins.outputs.eee`, :mod:`plugins.outputs.ctrf`);
one that cannot be written is an output error (exit 6, named in the record).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

__all__ = ["EXPORT_FORMATS", "ExportError", "parse_exports"]

# format -> what PATH names
EXPORT_FORMATS = {
    "every-eval-ever": "a folder: data/<benchmark>/<developer>/<model>/<uuid>.json and "
    "_samples.jsonl per suite (Every Eval Ever schema 0.3.0)",
    "ctrf": "a CTRF JSON file (the same as --ctrf PATH)",
}


class ExportError(ValueError):
    """An ``--export`` value that cannot be used (the message names it and the fix)."""


def parse_exports(values: Iterable[str], ctrf: str | None = None) -> dict[str, Path]:
    """``--export FORMAT=PATH`` values (and ``--ctrf PATH``) as format -> path.

    Raises:
        ExportError: no ``=``, an unknown format, an empty path, or one format given two
            different paths.
    """
    found: dict[str, Path] = {}
    pairs = [("ctrf", ctrf, "--ctrf")] if ctrf else []
    for value in values:
        name, sep, path = value.partition("=")
        pairs.append((name.strip(), path.strip() if sep else "", f"--export {value}"))
    for name, path, where in pairs:
        if name not in EXPORT_FORMATS:
            raise ExportError(
                f"{where}: unknown format {name!r}; use FORMAT=PATH with FORMAT one of "
                f"{', '.join(EXPORT_FORMATS)}"
            )
        if not path:
            raise ExportError(f"{where}: no path; use {name}=PATH")
        if name in found and found[name] != Path(path):
            raise ExportError(f"{where}: {name} is already written to {found[name]}")
        found[name] = Path(path)
    return found
