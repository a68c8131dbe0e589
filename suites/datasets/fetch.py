"""Downloading the pinned data with pooch (hash-checked, retried) into the user cache.

Every downloaded file is checked against the manifest's sha256 before it takes its
place, so an interrupted or truncated download never leaves a file that passes
verification, and a cached file whose hash no longer matches is downloaded again. Files the
project builds (``suites.datasets.derive``) are built from the downloaded ones and checked
the same way.

No partial file ever sits beside the data: pooch downloads into the staging folder
``DEST/.partial/`` (its temporary files too), and a file moves into the data folder (a
rename) only once whole and verified; built files are staged there as well. A fetch killed
midway (SIGKILL, SIGTERM, a power cut) leaves its bytes in ``.partial/`` only, which the
next fetch into that folder deletes. One fetch into a folder at a time: a second one waits
for the first (``DEST/.fetch.lock``, :mod:`suites.locks`) and then finds its files there.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from extractbench.suites.datasets import derive
from extractbench.suites.datasets.cache import data_cache_dir, data_cache_root
from extractbench.suites.datasets.manifest import FileEntry, Manifest
from extractbench.suites.files import atomic_write, fsync_folder
from extractbench.suites.locks import OutputBusy, PathLock

__all__ = [
    "FetchError",
    "data_cache_dir",
    "data_cache_root",
    "fetch",
    "MIRROR_ENV",
    "OFFLINE_ENV",
    "STAGING",
    "deadline_s",
]

MIRROR_ENV = "EXTRACTBENCH_DATA_MIRROR"
OFFLINE_ENV = "EXTRACTBENCH_OFFLINE"
STAGING = ".partial"  # DEST/.partial/: downloads and builds before they take their place


class FetchError(Exception):
    """A file could not be downloaded or did not verify; the message names it and why."""


def _url(entry: FileEntry, mirror: str | None) -> str:
    if mirror:
        return mirror.rstrip("/") + "/" + entry.path
    return entry.url


def _build(name: str, dest: Path, manifest: Manifest, entries: dict[str, FileEntry]) -> bytes:
    def panels(suite: str, suffix: str) -> dict[str, str]:
        out = {}
        for path, entry in manifest.suites[suite].items():
            if not entry.build:
                doc_id = Path(path).name.removesuffix(suffix)
                out[doc_id] = entry.upstream.rsplit("/", 2)[-2]
        return out

    if name == "fda-labels":
        return derive.fda_labels_file(
            derive.read_docs(dest / "fda/docs", "{}_REVIEW.md", panels("fda", "_REVIEW.md"))
        )
    if name == "minea-manifest":
        return derive.minea_manifest_file(
            derive.read_docs(dest / "minea/haystacks", "{}.md", panels("minea", ".md"))
        )
    raise FetchError(f"unknown builder {name!r} in the manifest")


def _place(dest: Path, entry: FileEntry, data: bytes) -> None:
    """Write a built file into ``dest`` once its sha256 is the manifest's (staged in
    ``dest/.partial``, then renamed)."""
    import hashlib

    sha = hashlib.sha256(data).hexdigest()
    if sha != entry.sha256:
        raise FetchError(
            f"{entry.path}: built file does not match the manifest (sha256 {sha[:12]}, "
            f"expected {entry.sha256[:12]})"
        )
    staging = dest / STAGING
    staging.mkdir(parents=True, exist_ok=True)
    atomic_write(dest / entry.path, data, staging=staging)


def _move_in(staged: Path, target: Path) -> None:
    """Rename a verified download from the staging folder to its place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(staged, target)
    fsync_folder(target.parent)


def fetch(
    manifest: Manifest,
    suites: Iterable[str],
    dest: Path,
    mirror: str | None = None,
    progress: bool = True,
    say: Callable[[str], None] = print,
) -> list[str]:
    """Download (or build) every file of ``suites`` into ``dest`` and verify it.

    Args:
        manifest: the data manifest.
        suites: suite names (each must be in the manifest).
        dest: the data folder to fill (laid out as ``docs/data.md`` describes).
        mirror: a base URL laid out like the data folder, used instead of the upstream
            URLs (an internal HTTP server, an S3 bucket behind HTTP).
        progress: show a progress bar per suite (tqdm, on stderr).
        say: where the one line per suite goes.

    Returns:
        The paths that were downloaded or built (empty when everything was there).

    Raises:
        FetchError: a download failed after retries (server refuses, not found, times
            out) or did not match its sha256; the message names the file and URL.
    """
    import pooch

    pooch.get_logger().setLevel(logging.WARNING)
    if mirror and not mirror.startswith(("http://", "https://")):
        raise FetchError(f"--mirror {mirror}: must be an http:// or https:// URL")
    lock = PathLock(dest / ".fetch", "fetching into")
    try:
        try:
            lock.acquire()
        except OutputBusy as busy:
            say(
                f"extractbench: waiting for another fetch into {dest} (pid {busy.holder.get('pid', '?')})"
            )
            lock.acquire(wait=True)
    except OSError as exc:
        raise FetchError(f"cannot write {dest}: {exc.strerror or exc}") from None
    from extractbench.suites.datasets.verify import DigestMemo  # it imports this module

    memo = DigestMemo()
    try:
        shutil.rmtree(dest / STAGING, ignore_errors=True)  # a killed fetch's partial bytes
        return _fetch_locked(manifest, list(suites), dest, mirror, progress, say, memo.sha256)
    finally:
        memo.close()
        shutil.rmtree(dest / STAGING, ignore_errors=True)
        lock.release()


def _fetch_locked(
    manifest: Manifest,
    names: list[str],
    dest: Path,
    mirror: str | None,
    progress: bool,
    say: Callable[[str], None],
    sha256: Callable[[Path], str],
) -> list[str]:
    """:func:`fetch` under the folder's fetch lock; ``sha256`` gives a file's digest."""
    done: list[str] = []
    for suite in names:
        entries = manifest.suites[suite]
        # the TableBench examples are downloaded (upstream: the official file, then
        # derived; a mirror: the derived file); the other built files are built here
        downloads = {p: e for p, e in entries.items() if e.build in (None, "tablebench-examples")}
        bad = manifest.verify_files(dest, [suite], sha256)  # missing, or another sha256
        todo = [p for p in bad if p in downloads]
        stale = [p for p in bad if p not in downloads]  # built from the downloaded files
        if not todo and not stale:
            continue
        size = sum(downloads[p].size for p in todo) / 1e6
        where = mirror or "upstream repositories (raw.githubusercontent.com)"
        say(f"extractbench: fetching {suite}: {len(todo)} files, {size:.1f} MB from {where}")
        registry = {}
        urls = {}
        for p in todo:
            entry = downloads[p]
            known = entry.sha256 if (mirror or not entry.build) else None
            registry[p] = f"sha256:{known}" if known else None
            urls[p] = _url(entry, mirror)
        try:
            _download(dest, todo, downloads, registry, urls, mirror, suite if progress else None)
            for p in stale:
                _place(dest, entries[p], _build(entries[p].build or "", dest, manifest, entries))
        except OSError as exc:  # the destination cannot be written (full disk, a file)
            raise FetchError(f"cannot write {dest}: {exc.strerror or exc}") from None
        done += todo + stale
    return done


# A download's deadlines: a connection (TCP and TLS) within CONNECT_S, no wait of more than
# STALL_S for the next byte, and the whole file within deadline_s(size): a mirror that
# sends the right bytes at 16 B/s ends in one line instead of keeping a run for hours.
CONNECT_S = 15.0
STALL_S = 30.0
MIN_RATE = 10_000  # bytes/s


def deadline_s(size: int) -> float:
    """Seconds a file of ``size`` bytes may take, connection to last byte:
    ``CONNECT_S + STALL_S + size / MIN_RATE`` (a 50 kB FDA document: 50 s)."""
    return CONNECT_S + STALL_S + size / MIN_RATE


def _downloader(size: int) -> Callable[..., None]:
    """A pooch downloader (``httpx``, links followed, proxies from the environment) whose
    request keeps the three deadlines above (:mod:`suites.http_deadline`).

    Raises (from the call):
        FetchError: the server refused or answered an HTTP error, or a deadline passed
            (the message says which, without the file: the caller names it).
    """
    from extractbench.suites.http_deadline import http_library, keep_deadlines, request_deadline

    httpx = http_library()

    total = deadline_s(size)

    def download(url: str, output_file: Any, pooch: Any = None, check_only: bool = False) -> None:
        start = time.monotonic()
        timeout = httpx.Timeout(STALL_S, connect=CONNECT_S)
        try:
            with (
                keep_deadlines(httpx.Client(follow_redirects=True, timeout=timeout)) as client,
                request_deadline(total),
                client.stream("GET", url) as response,
            ):
                response.raise_for_status()
                # unbuffered: what arrived is in the staged file even if the process is killed
                with open(output_file, "wb", buffering=0) as fh:
                    for chunk in response.iter_bytes():
                        fh.write(chunk)
        except httpx.ConnectTimeout:
            raise FetchError(f"no connection within {CONNECT_S:g} s") from None
        except httpx.TimeoutException:
            if time.monotonic() - start >= total:  # else the stall's timeout ended it
                raise FetchError(
                    f"not complete within {total:.0f} s, the deadline for {size:,} bytes "
                    f"(at least {MIN_RATE / 1000:g} kB/s): the server sends too slowly"
                ) from None
            raise FetchError(f"no byte for {STALL_S:g} s (the transfer stalled)") from None
        except httpx.HTTPStatusError as exc:
            status = exc.response
            raise FetchError(f"HTTP {status.status_code} {status.reason_phrase}") from None
        except httpx.HTTPError as exc:
            raise FetchError(_reason(exc)) from None

    return download


def _download(
    dest: Path,
    todo: list[str],
    downloads: dict[str, FileEntry],
    registry: dict[str, str | None],
    urls: dict[str, str],
    mirror: str | None,
    bar_label: str | None,
) -> None:
    """pooch fetches each file of ``todo`` into the staging folder (hash-checked where the
    hash is known), then it moves to its place; the official TableBench examples are
    derived on arrival from upstream."""
    import pooch
    import requests

    staging = dest / STAGING
    store = pooch.create(path=staging, base_url="", registry=registry, urls=urls, retry_if_failed=1)
    bar = None
    if bar_label and todo:
        from tqdm import tqdm

        bar = tqdm(total=len(todo), desc=bar_label, unit="file", leave=False)
    try:
        for p in todo:
            try:
                local = Path(store.fetch(p, downloader=_downloader(downloads[p].size)))
            except FetchError as exc:  # the downloader's one line
                raise FetchError(f"cannot fetch {p} from {urls[p]}: {exc}") from None
            except (requests.RequestException, ConnectionError, TimeoutError) as exc:
                raise FetchError(f"cannot fetch {p} from {urls[p]}: {_reason(exc)}") from None
            except ValueError as exc:  # pooch: the hash does not match
                raise FetchError(f"{p} from {urls[p]} does not match its sha256 ({exc})") from None
            if downloads[p].build == "tablebench-examples" and not mirror:
                _place(dest, downloads[p], derive.tablebench_examples_file(local.read_bytes()))
                local.unlink()
            else:
                _move_in(local, dest / p)
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    if "Connection refused" in str(exc) or "Max retries exceeded" in str(exc):
        return "the server refuses connections or cannot be reached"
    return text[:200]
