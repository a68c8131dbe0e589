"""A cache of data derived from the benchmark files (chunk spans, normalised tables).

Every xdist worker builds the same items at collection; deriving them once and reading
the result back keeps collection fast. Entries are JSON files in the user cache, keyed
by a digest of everything the result depends on, written atomically so concurrent
workers never read half a file. The temporary files of writers killed by SIGKILL
(``.NAME.*.tmp``, never read) are deleted by the next write once an hour old.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from suites.files import atomic_write

__all__ = ["cached_json", "digest_of"]

STALE_TMP_S = 3600  # a temporary file this old belongs to no live writer


def digest_of(parts: Iterable[bytes | str]) -> str:
    """Hex SHA-256 over ``parts`` (strings UTF-8 encoded), NUL-separated."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8") if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()


def cached_json(name: str, key: str, compute: Callable[[], Any]) -> Any:
    """Return ``compute()``, cached as ``<cache>/derived/<name>-<key[:24]>.json``.

    Args:
        name: what is cached (``fda-chunks``), for people reading the folder.
        key: digest of every input the result depends on (see :func:`digest_of`).
        compute: builds a JSON-safe value; only called on a cache miss.

    A cache that cannot be read or written is ignored (the value is recomputed).
    """
    from suites.files import cache_dir

    path = cache_dir() / "derived" / f"{name}-{key[:24]}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    value = compute()
    try:
        atomic_write(path, json.dumps(value))
        _sweep(path.parent)
    except OSError:  # a cache that cannot be written only costs time
        pass
    return value


def _sweep(folder: Path) -> None:
    """Delete temporary files of killed writers (older than :data:`STALE_TMP_S`)."""
    now = time.time()
    for tmp in folder.glob(".*.tmp"):
        try:
            if now - tmp.stat().st_mtime > STALE_TMP_S:
                tmp.unlink()
        except OSError:
            pass
