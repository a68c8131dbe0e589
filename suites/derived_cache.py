"""A cache of data derived from the benchmark files (chunk spans, normalised tables).

Every xdist worker builds the same items at collection; deriving them once and reading
the result back keeps collection fast. Entries are JSON files in the user cache, keyed
by a digest of everything the result depends on, written atomically so concurrent
workers never read half a file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from typing import Any

from suites.files import atomic_write

__all__ = ["cached_json", "digest_of"]


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
    except OSError:  # a cache that cannot be written only costs time
        pass
    return value
