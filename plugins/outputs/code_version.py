"""Which code measured a run: the package version and a digest of its source files, so
records made by different code (another checkout, an edited metric) are never merged or
compared as if they were one run."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["code_version"]

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("plugins", "fixtures", "suites")
SUFFIXES = (".py", ".json", ".j2")


@lru_cache(maxsize=1)
def code_version() -> dict[str, Any]:
    """``{"extractbench": version, "source_sha256": hex}``: the digest covers the path and
    bytes of every ``.py``, ``.json`` and ``.j2`` file of the three packages, sorted."""
    digest = hashlib.sha256()
    files = sorted(
        p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*")
        if p.suffix in SUFFIXES and p.is_file() and "__pycache__" not in p.parts
    )  # fmt: skip
    for path in files:
        digest.update(path.relative_to(ROOT).as_posix().encode("utf-8") + b"\0")
        digest.update(path.read_bytes() + b"\0")
    try:
        version = metadata.version("extractbench")
    except metadata.PackageNotFoundError:
        version = "not installed"
    return {"extractbench": version, "source_sha256": digest.hexdigest(), "files": len(files)}
