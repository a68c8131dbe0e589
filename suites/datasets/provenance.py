"""What data a run measured: for the run record, so someone else can check the bytes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from extractbench.suites.datasets.manifest import Manifest
from extractbench.suites.datasets.resolve import DataChoice
from extractbench.suites.datasets.verify import DigestMemo

__all__ = ["data_provenance"]


def data_provenance(
    manifest: Manifest,
    choice: DataChoice | None,
    folder: Path | None,
    suites: Sequence[str],
    skipped: Mapping[str, str],
) -> dict[str, Any]:
    """The run record's ``data`` section.

    Returns:
        ``manifest_version``, ``folder``, ``origin`` (``--data-dir``, ``user cache``,
        ``fetched``, ...), ``mirror``, ``fetched`` (count), and per selected suite of the
        manifest: one sha256 over its files' paths and sha256s as read now, the file
        count, whether every file matches the manifest (and which do not: ``changed``),
        and the license line of each source its files come from. The digests come from
        the digest memo (a file is hashed again only when its size, times or inode
        changed: :class:`suites.datasets.verify.DigestMemo`).
    """
    out: dict[str, Any] = {
        "manifest_version": manifest.version,
        "folder": str(folder) if folder else None,
        "origin": choice.origin if choice else None,
        "mirror": choice.mirror if choice else None,
        "fetched": len(choice.fetched) if choice else 0,
        "suites": {},
    }
    memo = DigestMemo()
    try:
        for suite in suites:
            if suite in skipped:
                continue
            if suite not in manifest.suites:
                out["suites"][suite] = {
                    "note": "not in the data manifest (a suite defined elsewhere)"
                }
                continue
            entry: dict[str, Any] = (
                manifest.digest(folder, suite, memo.sha256) if folder else {"sha256": None}
            )
            names = sorted({e.source for e in manifest.suites[suite].values()})
            entry["licenses"] = {
                f"{manifest.sources[n].repository}@{manifest.sources[n].commit[:12]}": (
                    manifest.sources[n].license
                )
                for n in names
            }
            out["suites"][suite] = entry
    finally:
        memo.close()
    return out
