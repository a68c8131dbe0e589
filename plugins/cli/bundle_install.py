"""Install an offline bundle (``extractbench bundle``) on a machine with no network.

Standard library only: ``extractbench bundle`` copies this file into the bundle as
``install.py``, so ``python3 install.py DIR`` runs where nothing is installed yet, and
``extractbench bundle install DIR`` runs the same :func:`main`. The steps, each timed:

1. check every part listed in ``bundle.json`` (size and SHA-256), then stream the parts,
   in order, through ``tarfile`` into ``DIR/unpacked`` and check every file's SHA-256;
2. install llama-cpp-python with ``pip --no-index --find-links``: a wheel carried in the
   bundle as is, else its source distribution built here, for CUDA when ``nvidia-smi``
   reports a GPU (``-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES`` from
   ``nvidia-smi --query-gpu=compute_cap``), else for the CPU;
3. install extractbench (the project's source, editable) with its extras, no index;
4. copy the pinned data into the user cache ``extractbench data verify`` checks, build
   ``llama-server`` with the same CMake arguments (``extractbench server build --sdist``),
   and run ``extractbench doctor``.

Exit status: 0 installed, 1 a part or file missing or corrupt or a step failed (one line
naming it and its log), 4 a usage error (wrong Python, not a bundle).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

MANIFEST = "bundle.json"
FORMAT = "extractbench-bundle/1"
FAILED, USAGE = 1, 4  # plugins/verdict/exit_codes.py: a failed step, a usage error

__all__ = [
    "BundleError",
    "PartsReader",
    "cuda_architectures",
    "main",
    "sha256_file",
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


def unpack(folder: Path, manifest: dict, into: Path) -> None:
    """Stream the parts into ``into`` and check every file against the manifest."""
    reader = PartsReader([folder / p["name"] for p in manifest["parts"]])
    with tarfile.open(fileobj=reader, mode="r|") as archive:
        archive.extractall(into, filter="data")
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


def cuda_architectures(query: str | None) -> str | None:
    """``nvidia-smi --query-gpu=compute_cap --format=csv,noheader`` output -> the
    ``CMAKE_CUDA_ARCHITECTURES`` value (``"9.0\\n8.0"`` -> ``"80;90"``); None for no GPU."""
    caps = sorted(
        {line.strip().replace(".", "") for line in (query or "").splitlines() if line.strip()}
    )
    caps = [c for c in caps if c.isdigit()]
    return ";".join(caps) or None


def visible_architectures() -> str | None:
    """The CUDA architectures of the GPUs ``nvidia-smi`` sees; None without one."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=60)  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    return cuda_architectures(done.stdout) if done.returncode == 0 else None


class Steps:
    """Runs and times the install's commands; each command's output goes to ``log``."""

    def __init__(self, log: Path) -> None:
        self.log, self.times = log, {}
        log.write_bytes(b"")

    def run(
        self, name: str, command: list[str], env: dict | None = None, cwd: Path | None = None
    ) -> None:
        """Run one step; BundleError naming the log when it fails."""
        started = time.monotonic()
        print(f"bundle install: {name} ...", flush=True)
        with self.log.open("ab") as out:
            out.write(f"\n$ {' '.join(command)}\n".encode())
            out.flush()
            try:
                code = subprocess.call(command, stdout=out, stderr=subprocess.STDOUT,
                                       env={**os.environ, **(env or {})}, cwd=cwd)  # fmt: skip
            except OSError as exc:
                raise BundleError(f"{name}: cannot run {command[0]}: {exc.strerror}") from None
        self.times[name] = round(time.monotonic() - started, 1)
        if code != 0:
            raise BundleError(f"{name} failed (exit {code}); see {self.log}")
        print(f"bundle install: {name}: {self.times[name]:.1f} s", flush=True)


def _python(args: argparse.Namespace, steps: Steps) -> Path:
    """The interpreter to install into: a new or existing ``--venv``, else this one."""
    if not args.venv:
        return Path(sys.executable)
    venv = Path(args.venv).resolve()
    if not (venv / "bin" / "python").exists():
        steps.run("create the virtual environment", [sys.executable, "-m", "venv", str(venv)])
    return venv / "bin" / "python"


def install(folder: Path, args: argparse.Namespace) -> dict:
    """Every step of the module docstring; returns the facts written to ``install.json``."""
    manifest = read_manifest(folder)
    wanted = manifest["python"]
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    if here != wanted:
        raise BundleError(
            f"the bundle's wheels are for Python {wanted}; run install.py with python{wanted} (this is {here})",
            USAGE,
        )
    started = time.monotonic()
    problems = verify_parts(folder, manifest)
    if problems:
        raise BundleError(f"{len(problems)} part(s) not as in {MANIFEST}: {problems[0]}")
    print(f"bundle install: {len(manifest['parts'])} parts verified", flush=True)
    unpacked = folder / "unpacked"
    shutil.rmtree(unpacked, ignore_errors=True)
    unpack(folder, manifest, unpacked)
    steps = Steps(folder / "install.log")
    steps.times["verify and unpack"] = round(time.monotonic() - started, 1)
    print(f"bundle install: {len(manifest['files'])} files unpacked and verified: "
          f"{steps.times['verify and unpack']:.1f} s", flush=True)  # fmt: skip
    python = _python(args, steps)
    env = {"PATH": f"{python.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    pip = [
        str(python),
        "-m",
        "pip",
        "install",
        "--no-index",
        "--find-links",
        str(unpacked / "wheels"),
    ]
    arch = None if args.cpu else (args.cuda_arch or visible_architectures())
    cmake = f"-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES={arch}" if arch else ""
    sdist = next(iter(sorted((unpacked / "sdist").glob("llama_cpp_python-*.tar.gz"))), None)
    wheel = next(iter(sorted((unpacked / "wheels").glob("llama_cpp_python-*.whl"))), None)
    if wheel is not None:
        steps.run("install llama-cpp-python (the bundle's wheel)", [*pip, str(wheel)], env)
    elif sdist is not None:
        what = f"CUDA, architectures {arch}" if arch else "CPU"
        steps.run(f"build llama-cpp-python from its source ({what})", [*pip, str(sdist)],
                  {**env, "CMAKE_ARGS": cmake, "CMAKE_BUILD_PARALLEL_LEVEL": str(args.jobs or os.cpu_count() or 1)})  # fmt: skip
    else:
        raise BundleError("the bundle holds neither a llama-cpp-python wheel nor its source")
    source = unpacked / "source"
    extras = manifest.get("extras") or []
    target = f"{source}[{','.join(extras)}]" if extras else str(source)
    steps.run(
        "install extractbench and its dependencies",
        [*pip, "-e", target, *manifest.get("with", [])],
        env,
    )
    cli = [str(python), "-m", "extractbench.plugins.cli.main"]
    cache = subprocess.run(
        [str(python), "-c", "from extractbench.suites.datasets.fetch import data_cache_dir;"
         "from extractbench.suites.datasets.manifest import load_manifest;print(data_cache_dir(load_manifest()))"],
        capture_output=True, text=True, cwd=source,
    )  # fmt: skip
    if cache.returncode != 0:
        raise BundleError(f"cannot find the data cache: {cache.stderr.strip().splitlines()[-1:]}")
    data = Path(cache.stdout.strip())
    shutil.copytree(unpacked / "data", data, dirs_exist_ok=True)
    steps.run(f"verify the data in {data}", [*cli, "data", "verify", str(data)], env, source)
    if sdist is not None and not args.no_server:
        steps.run("build llama-server (extractbench server build)",
                  [*cli, "server", "build", "--sdist", str(sdist), *(["--jobs", str(args.jobs)] if args.jobs else [])],
                  {**env, "CMAKE_ARGS": cmake}, source)  # fmt: skip
    facts = {"python": str(python), "source": str(source), "data_dir": str(data),
             "cuda_architectures": arch, "models": [str(unpacked / m) for m in manifest.get("models", [])],
             "seconds": steps.times, "total_seconds": round(time.monotonic() - started, 1)}  # fmt: skip
    (folder / "install.json").write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    doctor = subprocess.run([*cli, "doctor"], cwd=source, env={**os.environ, **env},
                            capture_output=True, text=True)  # fmt: skip
    print(doctor.stdout, end="")
    if doctor.returncode != 0:
        raise BundleError(
            f"extractbench doctor failed (exit {doctor.returncode}): {doctor.stderr.strip()[-300:]}"
        )
    model = f" --model {facts['models'][0]}" if facts["models"] else ""
    print(f"bundle install: done in {facts['total_seconds']:.0f} s; run: cd {source} && "
          f"{python.parent / 'python'} -m pytest suites/fda --limit 3{model}")  # fmt: skip
    return facts


class _Parser(argparse.ArgumentParser):
    """argparse whose errors exit 4, the project's usage error (2 means INCOMPLETE)."""

    def error(self, message: str):  # noqa: D102
        self.print_usage(sys.stderr)
        self.exit(USAGE, f"{self.prog}: error: {message}\n")


def parser(prog: str = "install.py") -> argparse.ArgumentParser:
    """The options of ``install.py`` and ``extractbench bundle install``."""
    p = _Parser(prog=prog, description="Install an extractbench bundle offline.")
    p.add_argument("dir", metavar="DIR", help="the folder holding bundle.json and the parts")
    p.add_argument("--venv", metavar="PATH", help="install into this virtual environment "
                   "(created when absent; default: the running Python's environment)")  # fmt: skip
    p.add_argument("--cpu", action="store_true", help="build llama.cpp for the CPU even with a GPU")
    p.add_argument("--cuda-arch", metavar="ARCHS", help="CMAKE_CUDA_ARCHITECTURES (default: "
                   "nvidia-smi --query-gpu=compute_cap)")  # fmt: skip
    p.add_argument("--jobs", type=int, metavar="N", help="parallel compile jobs (default: CPUs)")
    p.add_argument("--no-server", action="store_true", help="do not build llama-server")
    return p


def main(argv: list[str] | None = None, prog: str = "install.py") -> int:
    """Install the bundle of ``argv``'s DIR; the exit status of the module docstring."""
    args = parser(prog).parse_args(argv)
    try:
        install(Path(args.dir).resolve(), args)
    except BundleError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return exc.code
    return 0


if __name__ == "__main__":
    sys.exit(main())
