"""Which data folder a run reads, fetching the pinned data when none holds it.

Resolution order (``docs/data.md``, "Where a run reads data"): ``--data-dir``,
``$EXTRACTBENCH_DATA``, the user cache when it holds the selected suites' files verified
against the manifest; otherwise the selected suites are fetched into the user cache
(unless offline) and the cache is used. Offline,
a cached file that is there but truncated or edited is an error naming it (never used).
The sha256 checks go through the digest memo (:mod:`suites.datasets.verify`): a file
is hashed again only when its size, times or inode changed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from extractbench.suites.datasets.fetch import (
    MIRROR_ENV,
    OFFLINE_ENV,
    FetchError,
    data_cache_dir,
    fetch,
)
from extractbench.suites.datasets.manifest import Manifest
from extractbench.suites.item import DataError
from extractbench.suites.suite_options import truthy

__all__ = ["DataChoice", "DataDirError", "ENV_VAR", "explicit_data_dir", "choose_data_dir"]

ENV_VAR = "EXTRACTBENCH_DATA"


class DataDirError(Exception):
    """An explicitly given data folder does not exist, or the data cannot be fetched."""


@dataclass
class DataChoice:
    """The data folder of a run and how it was found.

    Attributes:
        folder: the folder, or None when no folder holds the data (offline, or no
            manifest suite selected and no default).
        origin: ``--data-dir``, ``$EXTRACTBENCH_DATA``, ``user cache``, ``user cache
            (offline)`` or ``fetched`` (into the user cache).
        fetched: files downloaded or built for this run.
        mirror: the mirror URL used, if any.
    """

    folder: Path | None
    origin: str
    fetched: list[str] = field(default_factory=list)
    mirror: str | None = None


def explicit_data_dir(option: str | None) -> DataChoice | None:
    """``--data-dir``, else ``$EXTRACTBENCH_DATA``, else None.

    Raises:
        DataDirError: the folder named does not exist.
    """
    for value, source in ((option, "--data-dir"), (os.environ.get(ENV_VAR), f"${ENV_VAR}")):
        if value:
            path = Path(value).expanduser().resolve()
            if not path.is_dir():
                raise DataDirError(
                    f"{source}={value}: no such folder; point it at the benchmark data "
                    "(the folder holding fda/, strucbench/, tableqa/, minea/)"
                )
            return DataChoice(path, source)
    return None


def offline_from_env() -> bool:
    """Whether ``EXTRACTBENCH_OFFLINE`` asks for no downloads."""
    return truthy(os.environ.get(OFFLINE_ENV, ""))


def _refuse_changed(manifest: Manifest, cache: Path, suites: Sequence[str]) -> None:
    """Offline: a cached file that is there but is not the manifest's is an error (a
    missing one is reported by the caller, with the fetch command)."""
    from extractbench.suites.datasets.verify import DigestMemo, check_suite_files

    memo = DigestMemo()
    try:
        changed = [
            p for s in suites for p in check_suite_files(cache, s, manifest, memo) if not p.missing
        ]
    finally:
        memo.close()
    if changed:
        raise changed[0].error(len(changed) - 1)


def choose_data_dir(
    manifest: Manifest,
    suites: Sequence[str],
    *,
    offline: bool = False,
    mirror: str | None = None,
    progress: bool = True,
    say: Callable[[str], None] = print,
) -> DataChoice:
    """The folder for a run of ``suites`` when no folder was given explicitly.

    Args:
        manifest: the data manifest.
        suites: the selected suites (those the manifest does not know are ignored).
        offline: never download (``--offline``, ``$EXTRACTBENCH_OFFLINE``).
        mirror: base URL replacing the upstream ones (``--mirror``, ``$EXTRACTBENCH_DATA_MIRROR``).

    Raises:
        DataDirError: the download failed (one line naming the file and why), or offline,
            a file of the user cache is truncated or edited (one line naming it, the
            manifest's sha256 and the fetch command).
    """
    wanted = [s for s in suites if s in manifest.suites]
    mirror = mirror or os.environ.get(MIRROR_ENV) or None
    cache = data_cache_dir(manifest)
    if wanted and cache.is_dir():
        from extractbench.suites.datasets.verify import DigestMemo

        memo = DigestMemo()
        try:
            if not manifest.verify_files(cache, wanted, memo.sha256):
                return DataChoice(cache, "user cache")
        finally:
            memo.close()
    if not wanted:
        return DataChoice(None, "none")
    if offline:
        if cache.is_dir():
            try:
                _refuse_changed(manifest, cache, wanted)
            except DataError as exc:
                raise DataDirError(str(exc)) from None
        return DataChoice(cache if cache.is_dir() else None, "user cache (offline)")
    try:
        fetched = fetch(manifest, wanted, cache, mirror=mirror, progress=progress, say=say)
    except FetchError as exc:
        raise DataDirError(f"data fetch failed: {exc}") from None
    return DataChoice(cache, "fetched", fetched, mirror)
