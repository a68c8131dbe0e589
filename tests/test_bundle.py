"""``extractbench bundle``: parts never over the part size, a manifest whose digests catch
a changed or missing part, the bundle's files back byte for byte, the GPU architectures
from nvidia-smi, and one line (exit 4) for each usage mistake. pip is replaced by a fake
that writes wheels; the real round trip (PyPI, a fresh venv, no index, a real run) is
tests/test_bundle_roundtrip.py."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from extractbench.plugins.cli import bundle_install
from extractbench.plugins.cli.bundle_install import PartsReader, cuda_architectures, verify_parts
from extractbench.plugins.cli.bundle_make import BundleSpec, PartWriter, make_bundle, parse_size
from extractbench.plugins.cli.bundle_wheels import requirements
from extractbench.plugins.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="needs the pinned data")


def test_sizes():
    assert parse_size("60") == parse_size("60MiB") == 60 << 20
    assert parse_size("512KiB") == 512 << 10 and parse_size("1G") == 1 << 30
    for bad in ("", "sixty", "1KiB", "-5"):
        with pytest.raises(ValueError):
            parse_size(bad)


@pytest.mark.parametrize("limit", [64 << 10, 100_000])
def test_parts_stay_under_the_limit_and_read_back_whole(tmp_path, limit):
    data = os.urandom(1_000_003)
    writer = PartWriter(tmp_path, limit)
    for start in range(0, len(data), 70_001):  # writes that straddle part boundaries
        writer.write(data[start : start + 70_001])
    writer.close()
    sizes = [(tmp_path / p["name"]).stat().st_size for p in writer.parts]
    assert max(sizes) <= limit and sum(sizes) == len(data)
    assert len(writer.parts) == -(-len(data) // limit)
    for part in writer.parts:
        assert hashlib.sha256((tmp_path / part["name"]).read_bytes()).hexdigest() == part["sha256"]
    reader = PartsReader([tmp_path / p["name"] for p in writer.parts])
    assert b"".join(iter(lambda: reader.read(33_333), b"")) == data


def test_requirements_leave_llama_out_and_keep_its_extras():
    wanted, llama_extras = requirements(["dev"])
    names = {r.split(">")[0].split("=")[0].split("[")[0] for r in wanted}
    assert "llama-cpp-python" not in names and {"pytest", "setuptools", "ruff"} <= names
    assert llama_extras == {"server"}
    with pytest.raises(bundle_install.BundleError, match="--extra nope"):
        requirements(["nope"])


def test_cuda_architectures_from_nvidia_smi():
    assert cuda_architectures("9.0\n9.0\n8.0\n") == "80;90"
    assert cuda_architectures("") is None and cuda_architectures("[N/A]\n") is None


def fake_wheel(folder: Path, name: str, requires: list[str]) -> Path:
    path = folder / f"{name}-1.0-py3-none-any.whl"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as wheel:
        meta = "Metadata-Version: 2.1\nName: x\nVersion: 1.0\n" + "".join(
            f"Requires-Dist: {r}\n" for r in requires
        )
        wheel.writestr(f"{name}-1.0.dist-info/METADATA", meta)
    path.write_bytes(buffer.getvalue())
    return path


@needs_data
def test_a_bundle_is_parts_a_manifest_and_install_py(tmp_path):
    asked: list[list[str]] = []

    def fake_pip(args: list[str], log: Path, what: str) -> None:
        asked.append(args)
        dest = Path(args[args.index("-d") + 1])
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "numpy-2.0-cp312-cp312-manylinux_2_28_x86_64.whl").write_bytes(os.urandom(300_000))

    llama = fake_wheel(
        tmp_path, "llama_cpp_python", ["numpy>=1.20", 'uvicorn>=0.22; extra == "server"']
    )
    spec = BundleSpec(out=tmp_path / "b", python="3.12", platforms=["manylinux_2_28_x86_64"],
                      part_size=1 << 20, data_dir=DATA, llama_wheel=llama, also=["lm-eval"])  # fmt: skip
    content = make_bundle(spec, download=fake_pip, progress=lambda line: None)
    download = asked[-1]
    assert download[:6] == ["download", "--only-binary=:all:", "--python-version", "3.12",
                            "--platform", "manylinux_2_28_x86_64"]  # fmt: skip
    assert "numpy>=1.20" in download and "lm-eval" in download
    assert not any(r.startswith("llama-cpp-python") for r in download)
    parts = sorted((tmp_path / "b").glob("extractbench-bundle.tar.*"))
    assert len(parts) == len(content["parts"]) > 1
    assert all(p.stat().st_size <= 1 << 20 for p in parts)
    assert (tmp_path / "b" / "install.py").read_text() == Path(bundle_install.__file__).read_text()
    assert verify_parts(tmp_path / "b", content) == []
    paths = {f["path"] for f in content["files"]}
    assert "wheels/llama_cpp_python-1.0-py3-none-any.whl" in paths
    assert "source/pyproject.toml" in paths and "source/plugins/cli/bundle_make.py" in paths
    assert any(p.startswith("data/fda/") for p in paths)
    bundle_install.unpack(tmp_path / "b", content, tmp_path / "u")  # every file's digest checked
    assert (tmp_path / "u/source/pyproject.toml").read_bytes() == (
        ROOT / "pyproject.toml"
    ).read_bytes()
    # a changed part and a missing one: named, and install stops before installing anything
    with open(parts[1], "r+b") as fh:
        fh.write(b"X")
    parts[-1].unlink()
    problems = verify_parts(tmp_path / "b", content)
    assert problems == [
        f"part {parts[1].name}: sha256 differs from bundle.json",
        f"missing part: {parts[-1].name}",
    ]
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    (tmp_path / "b" / "bundle.json").write_text(json.dumps({**content, "python": here}))
    done = subprocess.run([sys.executable, str(tmp_path / "b" / "install.py"), str(tmp_path / "b")],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert done.stderr.strip() == (f"install.py: 2 part(s) not as in bundle.json: part {parts[1].name}: "
                                   "sha256 differs from bundle.json")  # fmt: skip


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bundle"], "name the folder to write: -o DIR (or: extractbench bundle install DIR)"),
        (
            ["bundle", "-o", "X", "--part-size", "1KiB"],
            "--part-size '1KiB': a part must be at least 64KiB",
        ),
        (["bundle", "-o", "X", "--python", "3"], "--python 3: give a version such as 3.12"),
        (
            ["bundle", "-o", "X", "--llama-wheel", "nowhere.whl"],
            "--llama-wheel nowhere.whl: no such file",
        ),
    ],
)
def test_usage_mistakes_are_one_line_exit_4(capsys, argv, message):
    assert main(argv) == 4
    assert capsys.readouterr().err.strip() == f"extractbench bundle: {message}"


def test_install_of_a_folder_that_is_no_bundle(tmp_path, capsys):
    assert main(["bundle", "install", str(tmp_path)]) == 4
    err = capsys.readouterr().err.strip()
    assert err.startswith("extractbench bundle install: ") and "bundle.json: not readable" in err
    assert "\n" not in err


def test_install_refuses_another_python(tmp_path, capsys):
    (tmp_path / "bundle.json").write_text(
        json.dumps({"format": bundle_install.FORMAT, "python": "2.7", "parts": []})
    )
    assert bundle_install.main([str(tmp_path)]) == 4
    assert "wheels are for Python 2.7; run install.py with python2.7" in capsys.readouterr().err


@needs_data
def test_a_bundle_without_what_the_target_has_installs_offline(tmp_path):
    """``--exclude-installed``: a target environment that has extractbench's dependencies
    (this test's own, seen through a ``.pth`` file) gets a bundle of the build
    requirements only, in parts under the part size, and installs it with no index: the
    project, the data, the derived-data cache, ``extractbench doctor``. llama-cpp-python is
    the target's own (``--skip-llama``: its build takes most of an hour on 2 cores)."""
    import sysconfig

    target = tmp_path / "target"
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True, timeout=300)
    python = target / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig;print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    Path(site, "zzz-installed-here.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    freeze = tmp_path / "freeze.txt"
    freeze.write_text(subprocess.run([str(python), "-m", "pip", "freeze", "--all"], capture_output=True,
                                     text=True, check=True).stdout)  # fmt: skip
    llama = fake_wheel(tmp_path, "llama_cpp_python", ["numpy>=1.20"])
    made = subprocess.run(
        [sys.executable, "-m", "extractbench.plugins.cli.main", "bundle", "-o", str(tmp_path / "b"),
         "--exclude-installed", str(freeze), "--llama-wheel", str(llama), "--data-dir", str(DATA),
         "--part-size", "4MiB"], capture_output=True, text=True, cwd=ROOT, timeout=900,
    )  # fmt: skip
    assert made.returncode == 0, made.stdout[-2000:] + made.stderr[-2000:]
    manifest = json.loads((tmp_path / "b" / "bundle.json").read_text())
    assert len(manifest["parts"]) > 1 and all(p["size"] <= 4 << 20 for p in manifest["parts"])
    wheels = {f["path"].split("/")[1].split("-")[0].lower() for f in manifest["files"]
              if f["path"].startswith("wheels/")}  # fmt: skip
    assert wheels <= {"setuptools", "wheel", "llama_cpp_python"}, wheels  # the target has the rest
    offline = {
        k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONPATH"
    }
    offline |= {"PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull,
                "XDG_CACHE_HOME": str(tmp_path / "cache")}  # fmt: skip
    installed = subprocess.run([str(python), str(tmp_path / "b" / "install.py"), str(tmp_path / "b"),
                                "--skip-llama"], capture_output=True, text=True, env=offline,
                               timeout=900)  # fmt: skip
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-2000:]
    assert "llama-cpp-python" in installed.stdout  # doctor ran
    bundled = {Path(f["path"]).name for f in manifest["files"] if f["path"].startswith("derived/")}
    copied = {p.name for p in (tmp_path / "cache" / "extractbench" / "derived").glob("*.json")}
    assert bundled <= copied  # collection there reads them instead of deriving again
