"""An offline bundle's parts (``extractbench bundle``): its manifest, the parts checked and
read back to back as one tar stream, and every unpacked file checked against the manifest.

Standard library only: copied into the bundle beside ``install.py`` (``bundle_install``),
which imports it from there on a machine where nothing is installed yet.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, cast

MANIFEST = "bundle.json"
FORMAT = "extractbench-bundle/1"
FAILED, USAGE = 1, 4  # plugins/verdict/exit_codes.py: a failed step, a usage error

__all__ = [
    "FORMAT",
    "MANIFEST",
    "BundleError",
    "PartsReader",
    "read_manifest",
    "sha256_file",
    "unpack",
    "verify_parts",
]


class BundleError(Exception):
    """A bundle cannot be installed; ``code`` is the exit status, the message one line."""

    def __init__(self, message: str, code: int = FAILED) -> None:
        super().__init__(message)
        self.code = code


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(folder: Path) -> dict:
    """``bundle.json`` of ``folder``. Raises BundleError (4) when it is not a bundle."""
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # stdlib only: no safe_json here
        raise BundleError(f"{path}: not readable as a bundle manifest ({exc})", USAGE) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise BundleError(f"{path}: not an {FORMAT} manifest", USAGE)
    return data


def verify_parts(folder: Path, manifest: dict) -> list[str]:
    """One line per part that is missing, of another size or another SHA-256."""
    problems = []
    for part in manifest["parts"]:
        path = folder / part["name"]
        if not path.is_file():
            problems.append(f"missing part: {part['name']}")
        elif path.stat().st_size != part["size"]:
            problems.append(
                f"part {part['name']}: {path.stat().st_size} bytes, expected {part['size']}"
            )
        elif sha256_file(path) != part["sha256"]:
            problems.append(f"part {part['name']}: sha256 differs from {MANIFEST}")
    return problems


class PartsReader:
    """The parts read back to back as one stream (what ``tarfile``'s ``r|`` mode reads)."""

    def __init__(self, paths: list[Path]) -> None:
        self.paths, self.index, self.handle = list(paths), 0, None

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all when negative) across part boundaries."""
        out = bytearray()
        while size < 0 or len(out) < size:
            if self.handle is None:
                if self.index >= len(self.paths):
                    break
                self.handle = open(self.paths[self.index], "rb")
                self.index += 1
            block = self.handle.read(-1 if size < 0 else size - len(out))
            if not block:
                self.handle.close()
                self.handle = None
                continue
            out += block
        return bytes(out)


def unpack(
    folder: Path, manifest: dict, into: Path, after: Callable[[str], None] | None = None
) -> None:
    """Stream the parts into ``into`` and check every file against the manifest;
    ``after(path)`` is called as each member is written (``install.py`` starts the build
    once the source and the wheels are out, while later parts are still being read)."""
    reader = PartsReader([folder / p["name"] for p in manifest["parts"]])
    # a read-only stream over the parts: all an "r|" archive calls is read
    with tarfile.open(fileobj=cast(BinaryIO, reader), mode="r|") as archive:
        for member in archive:
            archive.extract(member, into, filter="data")
            if after is not None:
                after(member.name)
    bad = []
    for entry in manifest["files"]:
        path = into / entry["path"]
        if (
            not path.is_file()
            or path.stat().st_size != entry["size"]
            or sha256_file(path) != entry["sha256"]
        ):
            bad.append(entry["path"])
    if bad:
        raise BundleError(f"{len(bad)} unpacked file(s) differ from {MANIFEST}, first: {bad[0]}")
