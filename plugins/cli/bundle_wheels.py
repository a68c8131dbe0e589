"""The wheels of an offline bundle: what extractbench and llama-cpp-python need, and
``pip download`` of them for the target's Python and platform (:mod:`plugins.cli.bundle_make`)."""

from __future__ import annotations

import email.parser
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from extractbench.plugins.cli.bundle_install import BundleError

__all__ = [
    "download_wheels",
    "drop_installed",
    "llama_requirements",
    "prune_installed",
    "read_freeze",
    "requirements",
    "run_pip",
]

ROOT = Path(__file__).resolve().parents[2]
LLAMA = "llama-cpp-python"


def _name(requirement: str) -> str:
    """The normalised project name of a requirement string."""
    return re.split(r"[\s<>=!~\[;(@]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _extras_of(requirement: str) -> set[str]:
    found = re.search(r"\[([^\]]*)\]", requirement.split(";")[0])
    return {e.strip() for e in found.group(1).split(",")} if found else set()


def requirements(
    extras: Iterable[str], pyproject: Path = ROOT / "pyproject.toml"
) -> tuple[list[str], set[str]]:
    """extractbench's requirements with ``extras``, and its build requirements, without
    llama-cpp-python; with the llama-cpp-python extras they ask for (``server``).

    Raises:
        BundleError: an extra pyproject.toml does not define (exit 4).
    """
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    optional = project["project"].get("optional-dependencies", {})
    unknown = sorted(set(extras) - set(optional))
    if unknown:
        raise BundleError(
            f"--extra {unknown[0]}: not an extra of extractbench ({', '.join(optional)})", 4
        )
    wanted = list(project["project"]["dependencies"]) + [r for e in extras for r in optional[e]]
    wanted += project["build-system"]["requires"] + ["wheel"]
    llama_extras = {x for r in wanted if _name(r) == LLAMA for x in _extras_of(r)}
    return sorted({r for r in wanted if _name(r) != LLAMA}), llama_extras


def _member_text(archive: tarfile.TarFile, name: str) -> str:
    """The text of the regular file ``name`` in ``archive``.

    Raises:
        BundleError: ``name`` is not a regular file of the archive.
    """
    member = archive.extractfile(name)
    if member is None:
        raise BundleError(f"{archive.name}: {name} is not a regular file")
    return member.read().decode()


def llama_requirements(dist: Path, extras: set[str]) -> list[str]:
    """What llama-cpp-python needs: its ``Requires-Dist`` (with ``extras``); for a source
    archive also its ``[build-system] requires``, cmake and ninja (its build backend asks
    for them when the machine has none)."""
    if dist.suffix == ".whl":
        with zipfile.ZipFile(dist) as wheel:
            meta = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
            info, out = wheel.read(meta).decode(), []
    else:
        with tarfile.open(dist) as archive:
            top = archive.getnames()[0].split("/")[0]
            info = _member_text(archive, f"{top}/PKG-INFO")
            toml = _member_text(archive, f"{top}/pyproject.toml")
        out = list(tomllib.loads(toml).get("build-system", {}).get("requires", [])) + [
            "cmake",
            "ninja",
        ]
    for requirement in email.parser.Parser().parsestr(info).get_all("Requires-Dist") or []:
        spec, _, marker = requirement.partition(";")
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
        if extra is None:
            out.append(requirement.strip())
        elif extra.group(1) in extras:
            out.append(spec.strip())
    return out


def run_pip(args: list[str], log: Path, what: str) -> None:
    with log.open("ab") as out:
        out.write(f"\n$ pip {' '.join(args)}\n".encode())
        out.flush()
        code = subprocess.call(
            [sys.executable, "-m", "pip", *args], stdout=out, stderr=subprocess.STDOUT
        )
    if code != 0:
        tail = log.read_text(errors="replace").strip().splitlines()[-1:]
        raise BundleError(
            f"{what} failed (exit {code}): {tail[0][:200] if tail else ''}; see {log}"
        )


NO_WHEEL = re.compile(r"No matching distribution found for ([^\s;]+)")


def download_wheels(python: str, platform_tags: list[str], wanted: list[str], into: Path, log: Path,
                     download: Callable[[list[str], Path, str], None],
                     progress: Callable[[str], None]) -> None:  # fmt: skip
    """``pip download --only-binary=:all:`` of ``wanted`` for the target into ``into``. A
    requirement published only as a source archive (rouge-score) is built here into a
    wheel, which must be pure Python (``-none-any``), and the download retried with it.

    Raises:
        BundleError: pip failed otherwise, or such a wheel is not pure Python.
    """
    platforms = [a for p in platform_tags for a in ("--platform", p)]
    into.mkdir(parents=True, exist_ok=True)
    built: set[str] = set()
    while True:
        try:
            download(["download", "--only-binary=:all:", "--python-version", python, *platforms,
                      "--find-links", str(into), "-d", str(into), *wanted], log,
                     "pip download of the wheels")  # fmt: skip
            return
        except BundleError as exc:
            found = NO_WHEEL.search(str(exc))
            if found is None or _name(found.group(1)) in built:
                raise
            requirement = found.group(1)
            built.add(_name(requirement))
        progress(f"bundle: {requirement} has no wheel: building it here (pure Python only)")
        before = set(into.glob("*.whl"))
        download(
            ["wheel", "--no-deps", "-w", str(into), requirement], log, f"pip wheel {requirement}"
        )
        made = sorted(set(into.glob("*.whl")) - before)
        if not made or not all(p.name.endswith("-none-any.whl") for p in made):
            raise BundleError(f"{requirement}: no wheel for the target and its source builds a "
                              f"platform-specific one here ({', '.join(p.name for p in made)}); "
                              "build it on the target's platform and pass --with PATH")  # fmt: skip


def read_freeze(path: Path) -> dict[str, str | None]:
    """``pip freeze --all`` of the target (``--exclude-installed``): normalised project name ->
    version (None for a direct reference such as ``name @ file:///...``); editable and
    option lines are left out (they are the target's own checkouts).

    Raises:
        BundleError: the file cannot be read (exit 4).
    """
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise BundleError(
            f"--exclude-installed {path}: cannot read it ({exc.strerror})", 4
        ) from None
    out: dict[str, str | None] = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        name, sep, version = line.partition("==")
        out[_name(name)] = version.strip() if sep else None
    return out


def drop_installed(
    wanted: list[str], installed: dict[str, str | None], keep: set[str]
) -> list[str]:
    """``wanted`` less the requirements the target already satisfies (its version within
    the requirement's specifier), except ``keep`` (build requirements: pip installs them
    into an isolated build environment, whatever the target holds)."""
    from packaging.requirements import InvalidRequirement, Requirement

    out = []
    for text in wanted:
        name = _name(text)
        version = installed.get(name, "")
        if name in keep or name not in installed:
            out.append(text)
            continue
        try:
            spec = Requirement(text).specifier
        except InvalidRequirement:
            out.append(text)
            continue
        if version is None or not spec.contains(version, prereleases=True):
            out.append(text)  # a direct reference, or a version the requirement excludes
    return out


def prune_installed(folder: Path, installed: dict[str, str | None], keep: set[str]) -> list[str]:
    """Delete the wheels of ``folder`` the target holds at the same version (dependencies
    pip downloaded on the way), except ``keep``; the names of those deleted."""
    gone = []
    for wheel in sorted(folder.glob("*.whl")):
        name, version = wheel.name.split("-")[:2]
        if (
            _name(name) in installed
            and installed[_name(name)] == version
            and _name(name) not in keep
        ):
            wheel.unlink()
            gone.append(wheel.name)
    return gone
