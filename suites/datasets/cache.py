"""Where the user data cache lives: one folder per manifest version under
``<user cache>/extractbench/data`` (platformdirs), or ``$EXTRACTBENCH_DATA_CACHE``."""

from __future__ import annotations

import os
from pathlib import Path

from extractbench.suites.datasets.manifest import Manifest

__all__ = ["CACHE_ENV", "data_cache_root", "data_cache_dir"]

CACHE_ENV = "EXTRACTBENCH_DATA_CACHE"


def data_cache_root() -> Path:
    """``<user cache>/extractbench/data`` (platformdirs), or ``$EXTRACTBENCH_DATA_CACHE``:
    the folder of every manifest version's data (and of the digest memo)."""
    import platformdirs

    root = os.environ.get(CACHE_ENV)
    return (
        Path(root).expanduser() if root else platformdirs.user_cache_path("extractbench") / "data"
    )


def data_cache_dir(manifest: Manifest) -> Path:
    """``<user cache>/extractbench/data/<manifest version>`` (platformdirs), or
    ``$EXTRACTBENCH_DATA_CACHE/<manifest version>``."""
    return data_cache_root() / manifest.version
