"""Install an offline bundle (``extractbench bundle``) on a machine with no network.

Standard library only: ``extractbench bundle`` copies this file into the bundle as
``install.py``, so ``python3 install.py DIR`` runs where nothing is installed yet, and
``extractbench bundle install DIR`` runs the same :func:`main`. The steps, each timed:

1. check every part listed in ``bundle.json`` (size and SHA-256), then stream the parts,
   in order, through ``tarfile`` into ``DIR/unpacked`` and check every file's SHA-256;
   as soon as llama-cpp-python's source and the wheels are out (the first part, for
   parts of the usual size) the one CMake build starts in the background
   (:mod:`plugins.cli.bundle_llama`: the CUDA wheel, for the GPUs ``nvidia-smi --query-gpu
   =compute_cap`` reports, else the CPU, and ``llama-server`` together, its build tree
   kept), while the later parts are read;
2. without the source: the bundle's llama-cpp-python wheel, as is (``--skip-llama``:
   neither, the installed one is kept);
3. install extractbench (the project's source, editable) with its extras, no index;
   a bundle made with ``--exclude-installed`` into an environment that has the rest
   (``--venv`` is then made with ``--system-site-packages``);
4. copy the pinned data and the derived-data cache into the user cache, run
   ``extractbench data verify``, register the built ``llama-server`` for ``--serve``, and
   run ``extractbench doctor``; with ``--measure``, ``benchmarks/gpu_main_job.sh`` and one
   archive of its results (:mod:`plugins.cli.bundle_measure`).

Exit status: 0 installed, 1 a part or file missing or corrupt or a step failed (one line
naming it and its log), 4 a usage error (wrong Python, not a bundle).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

try:  # in the bundle folder, beside this file (nothing installed yet); else the package
    import bundle_parts as _parts  # type: ignore[import-not-found]
except ImportError:
    from extractbench.plugins.cli import bundle_parts as _parts

FORMAT, MANIFEST, USAGE, BundleError = (
    _parts.FORMAT,
    _parts.MANIFEST,
    _parts.USAGE,
    _parts.BundleError,
)
PartsReader, read_manifest, sha256_file = (
    _parts.PartsReader,
    _parts.read_manifest,
    _parts.sha256_file,
)
unpack, verify_parts = _parts.unpack, _parts.verify_parts
try:
    import bundle_llama as _llama  # type: ignore[import-not-found]
    import bundle_measure as _measure  # type: ignore[import-not-found]
except ImportError:
    from extractbench.plugins.cli import bundle_llama as _llama
    from extractbench.plugins.cli import bundle_measure as _measure

__all__ = [
    "FORMAT",
    "MANIFEST",
    "BundleError",
    "PartsReader",
    "cuda_architectures",
    "main",
    "read_manifest",
    "sha256_file",
    "unpack",
    "verify_parts",
]


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


def _python(args: argparse.Namespace, steps: Steps, system_site: bool = False) -> Path:
    """The interpreter to install into: a new or existing ``--venv``, else this one; a new
    one sees this Python's packages where the bundle left out what the target has
    (``system_site``: made with ``--exclude-installed``)."""
    if not args.venv:
        return Path(sys.executable)
    venv = Path(args.venv).resolve()
    if not (venv / "bin" / "python").exists():
        shared = ["--system-site-packages"] if system_site else []
        steps.run(
            "create the virtual environment", [sys.executable, "-m", "venv", *shared, str(venv)]
        )
    return venv / "bin" / "python"


def _check(folder: Path) -> dict:
    """The manifest, once this Python and every part are as it says."""
    manifest = read_manifest(folder)
    wanted, here = manifest["python"], f"{sys.version_info.major}.{sys.version_info.minor}"
    if here != wanted:
        raise BundleError(
            f"the bundle's wheels are for Python {wanted}; run install.py with python{wanted} (this is {here})",
            USAGE,
        )
    problems = verify_parts(folder, manifest)
    if problems:
        raise BundleError(f"{len(problems)} part(s) not as in {MANIFEST}: {problems[0]}")
    print(f"bundle install: {len(manifest['parts'])} parts verified", flush=True)
    return manifest


def _ask(python: Path, code: str, cwd: Path) -> Path:
    """A folder the installed extractbench names (``code`` prints it)."""
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, cwd=cwd)
    if done.returncode != 0:
        raise BundleError(f"cannot ask extractbench where: {done.stderr.strip().splitlines()[-1:]}")
    return Path(done.stdout.strip())


def install(folder: Path, args: argparse.Namespace) -> dict:
    """Every step of the module docstring; returns the facts written to ``install.json``."""
    started, manifest = time.monotonic(), _check(folder)
    unpacked = folder / "unpacked"
    shutil.rmtree(unpacked, ignore_errors=True)
    steps = Steps(folder / "install.log")
    python = _python(args, steps, system_site=bool(manifest.get("excluded_installed")))
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
    early = {f["path"] for f in manifest["files"] if f["path"].startswith(("sdist/", "wheels/"))}
    sdists = sorted(p for p in early if p.startswith("sdist/llama_cpp_python-"))
    build: list[_llama.BackgroundBuild] = []
    build_dir = folder / "llama-build"

    def start_build(member: str) -> None:  # once the source and every wheel are out
        early.discard(member)
        if early or build or not sdists or args.skip_llama:
            return
        command, extra = _llama.build_command(pip, unpacked / sdists[0], build_dir, arch,
                                              not args.no_server, args.jobs or os.cpu_count() or 1)  # fmt: skip
        print(f"bundle install: building llama-cpp-python and llama-server in the background "
              f"({'CUDA ' + arch if arch else 'CPU'}; log: {folder / 'llama-build.log'})", flush=True)  # fmt: skip
        build.append(_llama.BackgroundBuild(command, {**env, **extra}, folder / "llama-build.log"))

    unpack(folder, manifest, unpacked, start_build)
    steps.times["verify and unpack"] = round(time.monotonic() - started, 1)
    print(f"bundle install: {len(manifest['files'])} files unpacked and verified: "
          f"{steps.times['verify and unpack']:.1f} s", flush=True)  # fmt: skip
    wheel = next(iter(sorted((unpacked / "wheels").glob("llama_cpp_python-*.whl"))), None)
    if build:
        code, seconds = build[0].wait()
        steps.times["llama.cpp build (in the background)"] = seconds
        if code != 0:
            raise BundleError(f"the llama.cpp build failed (exit {code}); see {build[0].log}")
    elif wheel is not None and not args.skip_llama:
        steps.run("install llama-cpp-python (the bundle's wheel)", [*pip, str(wheel)], env)
    elif not args.skip_llama:
        raise BundleError("the bundle holds neither a llama-cpp-python wheel nor its source")
    source = unpacked / "source"
    extras = manifest.get("extras") or []
    target = f"{source}[{','.join(extras)}]" if extras else str(source)
    steps.run("install extractbench and its dependencies", [*pip, "-e", target, *manifest.get("with", [])], env)  # fmt: skip
    cli = [str(python), "-m", "extractbench.plugins.cli.main"]
    data = _ask(python, "from extractbench.suites.datasets.fetch import data_cache_dir;from extractbench"
                ".suites.datasets.manifest import load_manifest;print(data_cache_dir(load_manifest()))", source)  # fmt: skip
    shutil.copytree(unpacked / "data", data, dirs_exist_ok=True)
    if (unpacked / "derived").is_dir():  # the derived-data cache: collection need not rebuild it
        cache = _ask(
            python, "from extractbench.suites.files import cache_dir;print(cache_dir())", source
        )
        shutil.copytree(unpacked / "derived", cache / "derived", dirs_exist_ok=True)
    steps.run(f"verify the data in {data}", [*cli, "data", "verify", str(data)], env, source)
    server = _llama.find_server(build_dir) if build and not args.no_server else None
    if server is not None:
        where = _ask(python, "from extractbench.fixtures.models.registry import DEFAULT_BACKEND, "
                     "backend_kind as k;print(k(DEFAULT_BACKEND).serve.build_folder())", source)  # fmt: skip
        facts = {"llama_cpp_python": where.name, "source": "extractbench bundle install (one build)",
                 "build_dir": str(build_dir), "cmake_args": build[0].command[-2:],
                 "seconds": steps.times["llama.cpp build (in the background)"]}  # fmt: skip
        print(
            f"bundle install: llama-server: {_llama.register_server(server, where, facts)}",
            flush=True,
        )
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
    if args.measure:
        code = _measure.measure(source, python, folder / "measure", folder / "measure.log", env)
        left = _measure.archive_results(folder / "measure", folder / "measure-results.tar.xz")
        print(f"bundle install: measured (gpu_main_job.sh exit {code}): {folder / 'measure-results.tar.xz'}"
              + (f"; left out to stay under 16 MiB: {', '.join(left)}" if left else ""), flush=True)  # fmt: skip
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
    p.add_argument("--skip-llama", action="store_true", help="keep the llama-cpp-python this "
                   "Python has (no build, no llama-server)")  # fmt: skip
    p.add_argument("--measure", action="store_true", help="then run benchmarks/gpu_main_job.sh "
                   "(each row under its budget) and write measure-results.tar.xz (at most 16 MiB)")  # fmt: skip
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
