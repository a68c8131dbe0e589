"""The data manifest: every file a suite reads, where it comes from, and its sha256.

``manifest.json`` beside this module is reviewed like code. Per suite it lists each file
(path under the data dir, sha256, size) with its upstream source (repository, commit,
path, download URL at that commit) or, for a file the project builds, the builder
(``suites.datasets.derive``). Sources carry their license lines.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extractbench.suites import safe_json
from extractbench.suites.files import sha256_of

__all__ = [
    "MANIFEST_PATH",
    "FileEntry",
    "Source",
    "Manifest",
    "load_manifest",
]

MANIFEST_PATH = Path(__file__).resolve().with_name("manifest.json")


@dataclass(frozen=True)
class Source:
    """An upstream repository at one commit.

    Attributes:
        name: the key files refer to.
        repository: ``owner/name`` on GitHub.
        commit: the pinned commit.
        license: the license line to show and record.
    """

    name: str
    repository: str
    commit: str
    license: str


@dataclass(frozen=True)
class FileEntry:
    """One data file.

    Attributes:
        path: path under the data dir (``fda/docs/K153137_REVIEW.md``).
        sha256: hex SHA-256 of the file's bytes.
        size: bytes.
        source: name of its :class:`Source`.
        upstream: path in the source repository at the source's commit.
        url: download URL of the upstream file at that commit.
        build: for a file the project builds instead of downloading, the builder's name
            (``fda-labels``, ``minea-manifest``, ``tablebench-examples``); None otherwise.
    """

    path: str
    sha256: str
    size: int
    source: str
    upstream: str
    url: str
    build: str | None = None


@dataclass
class Manifest:
    """The parsed manifest: a version, the sources and each suite's files."""

    version: str
    sources: dict[str, Source]
    suites: dict[str, dict[str, FileEntry]] = field(default_factory=dict)

    def files(self, suites: Iterable[str] | None = None) -> dict[str, FileEntry]:
        """path -> entry for the files of ``suites`` (every suite when None).

        Raises:
            KeyError: a suite the manifest does not list.
        """
        names = list(self.suites) if suites is None else list(suites)
        out: dict[str, FileEntry] = {}
        for name in names:
            out.update(self.suites[name])
        return out

    def missing(self, folder: Path, suites: Iterable[str]) -> list[str]:
        """Paths of the suites' files absent from ``folder`` or of another size (cheap:
        no hashing)."""
        return [
            p
            for p, e in self.files(suites).items()
            if not (folder / p).is_file() or (folder / p).stat().st_size != e.size
        ]

    def verify_files(
        self, folder: Path, suites: Iterable[str], sha256: Callable[[Path], str] = sha256_of
    ) -> list[str]:
        """Paths of the suites' files missing from ``folder`` or not matching their sha256.

        ``sha256``: how a file's digest is had (default: read it whole;
        :meth:`suites.datasets.verify.DigestMemo.sha256` remembers it while the file's
        size, times and inode stay)."""
        return [
            p
            for p, e in self.files(suites).items()
            if not (folder / p).is_file()
            or (folder / p).stat().st_size != e.size
            or sha256(folder / p) != e.sha256
        ]

    def verify(self, folder: Path, suites: Iterable[str] | None = None) -> list[str]:
        """Check a local copy: one line per missing, changed or extra file.

        Extra files are those under the suites' top folders that no suite lists.
        """
        names = list(self.suites) if suites is None else list(suites)
        problems = [
            f"missing: {p}"
            if not (folder / p).is_file()
            else f"changed: {p} (sha256 differs from the manifest)"
            for p in sorted(self.verify_files(folder, names))
        ]
        listed = set(self.files())
        for top in sorted({p.split("/", 1)[0] for p in self.files(names)}):
            for local in sorted((folder / top).rglob("*")) if (folder / top).is_dir() else []:
                rel = local.relative_to(folder).as_posix()
                if local.is_file() and rel not in listed and not local.name.startswith("."):
                    problems.append(f"extra: {rel} (not in the manifest)")
        return problems

    def digest(
        self, folder: Path, suite: str, sha256: Callable[[Path], str] = sha256_of
    ) -> dict[str, Any]:
        """What a run of ``suite`` read: one sha256 over its files' paths and sha256s,
        whether every file matches the manifest, and (when not) the paths that differ
        (``changed``, at most 20). ``sha256`` as in :meth:`verify_files`."""
        total = hashlib.sha256()
        changed = []
        for path, entry in sorted(self.suites[suite].items()):
            local = folder / path
            sha = sha256(local) if local.is_file() else "missing"
            if sha != entry.sha256:
                changed.append(path)
            total.update(f"{path}\0{sha}\n".encode())
        out = {"sha256": total.hexdigest(), "files": len(self.suites[suite]),
               "matches_manifest": not changed}  # fmt: skip
        if changed:
            out["changed"] = changed[:20]
        return out


def load_manifest(path: Path = MANIFEST_PATH) -> Manifest:
    """Read ``manifest.json``.

    Raises:
        OSError, ValueError: the file cannot be read or is not a manifest.
    """
    data = safe_json.loads(Path(path).read_text(encoding="utf-8"))
    sources = {name: Source(name, **s) for name, s in data["sources"].items()}
    suites = {
        suite: {p: FileEntry(path=p, **e) for p, e in files.items()}
        for suite, files in data["suites"].items()
    }
    return Manifest(str(data["version"]), sources, suites)
