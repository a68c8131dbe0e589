"""``extractbench server build`` and which server ``--serve`` starts.

The build runs for real (pip download from a package index served on 127.0.0.1, tar
unpack, CMake configure, compile) on a small source distribution laid out like
llama-cpp-python's (``vendor/llama.cpp/CMakeLists.txt`` with a ``llama-server`` target), so
it takes seconds; the real llama.cpp build is CI's step and ``test_llama_server.py``'s.
"""

from __future__ import annotations

import functools
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from extractbench.fixtures.models.llama_cpp import server_build
from extractbench.fixtures.models.llama_cpp.repack import decide_here
from extractbench.fixtures.models.llama_cpp.server_build import find_llama_server, llama_cpp_version
from extractbench.suites.files import sha256_of

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")

CMAKELISTS = """cmake_minimum_required(VERSION 3.14)
project(fake_llama C)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
add_executable(llama-server server.c)
add_executable(other other.c)
"""
SERVER_C = '#include <stdio.h>\nint main(void) { puts("fake llama-server"); return 0; }\n'
BACKEND = """
import os, zipfile
def get_requires_for_build_wheel(config_settings=None):
    return []
def prepare_metadata_for_build_wheel(directory, config_settings=None):
    info = os.path.join(directory, "llama_cpp_python-{v}.dist-info")
    os.makedirs(info)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\\nName: llama-cpp-python\\nVersion: {v}\\n")
    return "llama_cpp_python-{v}.dist-info"
def build_wheel(directory, config_settings=None, metadata_directory=None):
    raise RuntimeError("not needed by pip download")
"""


def fake_sdist(folder: Path, version: str, server_c: str = SERVER_C, vendored: bool = True) -> Path:
    """A source archive shaped like llama-cpp-python's: PKG-INFO, an in-tree PEP 517
    backend (pip download prepares its metadata without installing anything) and
    ``vendor/llama.cpp`` with a ``llama-server`` CMake target."""
    top = f"llama_cpp_python-{version}"
    files = {
        "PKG-INFO": f"Metadata-Version: 2.1\nName: llama-cpp-python\nVersion: {version}\n",
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\n'
        'backend-path = ["."]\n',
        "backend.py": BACKEND.replace("{v}", version),
    }
    if vendored:
        files |= {
            "vendor/llama.cpp/CMakeLists.txt": CMAKELISTS,
            "vendor/llama.cpp/server.c": server_c,
            "vendor/llama.cpp/other.c": "int main(void) { return 0; }\n",
        }
    path = folder / f"{top}.tar.gz"
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty user cache for this test (``XDG_CACHE_HOME``)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "extractbench"


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "extractbench.plugins.cli.main", *args], capture_output=True, text=True,
        env={**os.environ, **(env or {})}, timeout=600,
    )  # fmt: skip


def test_build_downloads_the_source_with_pip_from_the_index_and_compiles_llama_server(
    tmp_path, cache
):
    version = "9.9.9"
    index = tmp_path / "index"
    sdist = fake_sdist(index / "files", version)
    project = index / "simple" / "llama-cpp-python"
    project.mkdir(parents=True)
    (project / "index.html").write_text(
        f'<a href="../../files/{sdist.name}#sha256={sha256_of(sdist)}">{sdist.name}</a>'
    )
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(index))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/simple/"
        done = cli("server", "build", "--version", version, "--jobs", "2",
                   env={"PIP_INDEX_URL": url, "PIP_NO_CACHE_DIR": "1"})  # fmt: skip
    finally:
        httpd.shutdown()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "downloading the llama-cpp-python==9.9.9 source" in done.stdout
    binary = cache / "llama-server" / version / "llama-server"
    assert subprocess.run([binary], capture_output=True, text=True).stdout == "fake llama-server\n"
    facts = json.loads((binary.parent / "build.json").read_text())
    assert facts["sdist_sha256"] == sha256_of(sdist) and facts["llama_cpp_python"] == version
    assert facts["cmake_flags"] == list(server_build.CMAKE_FLAGS)
    log = (binary.parent / "build.log").read_text()
    assert "bin/llama-server" in log and "bin/other" not in log  # only the server target


def test_serve_prefers_the_built_server_then_path_then_none(tmp_path, cache, monkeypatch):
    version = llama_cpp_version()  # llama-cpp-python is a dependency
    on_path = tmp_path / "bin" / "llama-server"
    on_path.parent.mkdir()
    on_path.write_text("#!/bin/sh\n")
    on_path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{on_path.parent}{os.pathsep}{os.environ['PATH']}")
    assert find_llama_server().source == "PATH"
    assert find_llama_server().binary == on_path
    sdist = fake_sdist(tmp_path / "dl", version)
    done = cli("server", "build", "--sdist", str(sdist))
    assert done.returncode == 0, done.stderr
    found = find_llama_server()
    assert (
        found.source == "built"
        and found.binary == cache / "llama-server" / version / "llama-server"
    )
    assert found.describe()["sdist_sha256"] == sha256_of(sdist)
    which = cli("server", "which")
    first, repack = which.stdout.strip().splitlines()
    assert which.returncode == 0 and first == f"{found.binary} (built)"
    # the build and `which` say what --serve asks of this machine (AMX: --no-repack)
    decision = decide_here("auto")
    assert ("with --no-repack" in repack) is (not decision.repack), repack
    assert repack.endswith(decision.reason) and repack in done.stdout
    monkeypatch.setenv("PATH", os.environ["PATH"].split(os.pathsep, 1)[1])
    shutil.rmtree(cache / "llama-server")
    if shutil.which("llama-server") is None:
        assert find_llama_server() is None
        which = cli("server", "which")
        assert which.returncode == 1 and "llama-cpp-python's one-slot server" in which.stdout


@pytest.mark.parametrize(
    "case, expected",
    [
        ("no-vendor", "no vendor/llama.cpp/CMakeLists.txt inside"),
        ("compile-error", "cmake --build --target llama-server failed (exit"),
        ("not-an-archive", "not a readable source archive"),
        ("no-cmake", "cmake not found on PATH"),
        ("jobs", "--jobs 0: must be at least 1"),
    ],
)
def test_a_build_that_cannot_work_is_one_line_and_exit_4(tmp_path, cache, case, expected):
    env = {}
    args = ["--sdist"]
    if case == "no-vendor":
        args.append(str(fake_sdist(tmp_path, "1.0", vendored=False)))
    elif case == "compile-error":
        args.append(str(fake_sdist(tmp_path, "1.0", server_c="int main(void) { oops }\n")))
    elif case == "not-an-archive":
        bad = tmp_path / "x.tar.gz"
        bad.write_text("not gzip")
        args.append(str(bad))
    elif case == "no-cmake":
        args.append(str(fake_sdist(tmp_path, "1.0")))
        env["PATH"] = str(Path(sys.executable).parent)  # python, no cmake
    else:
        args += [str(fake_sdist(tmp_path, "1.0")), "--jobs", "0"]
    done = cli("server", "build", *args, env=env)
    assert done.returncode == 4, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], done.stderr
    if case == "compile-error":
        assert lines[0].endswith("build.log") and "oops" in Path(lines[0].split()[-1]).read_text()
    assert not list(cache.glob("llama-server/*/llama-server"))


def test_if_missing_keeps_a_server_built_with_the_same_flags_and_rebuilds_otherwise(
    tmp_path, cache
):
    built = cli("server", "build", "--version", "1.0", "--sdist", str(fake_sdist(tmp_path, "1.0")))
    assert built.returncode == 0, built.stderr
    binary = cache / "llama-server" / "1.0" / "llama-server"
    before = binary.stat().st_mtime_ns
    # an unreadable archive: a build that started would fail, so exit 0 means none started
    bad = tmp_path / "bad.tar.gz"
    bad.write_text("not gzip")
    kept = cli("server", "build", "--version", "1.0", "--sdist", str(bad), "--if-missing")
    assert kept.returncode == 0, kept.stderr
    assert (
        f"kept {binary}: built for llama-cpp-python==1.0 with the same CMake flags" in kept.stdout
    )
    assert binary.stat().st_mtime_ns == before
    # other CMake flags ($CMAKE_ARGS, e.g. a GPU build): the kept server is not theirs
    other = cli("server", "build", "--version", "1.0", "--sdist", str(bad), "--if-missing",
                env={"CMAKE_ARGS": "-DGGML_NATIVE=OFF"})  # fmt: skip
    assert other.returncode == 4 and "not a readable source archive" in other.stderr
    # another version has no server yet: it is built
    fresh = cli("server", "build", "--version", "2.0", "--if-missing",
                "--sdist", str(fake_sdist(tmp_path / "two", "2.0")))  # fmt: skip
    assert fresh.returncode == 0 and (cache / "llama-server" / "2.0" / "llama-server").is_file()
