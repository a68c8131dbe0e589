"""``extractbench data verify``: each missing or changed file, the first five extra files
and the counts; ``-v`` every extra file; exit 1 only on missing or changed files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from extractbench.plugins.cli.main import main
from extractbench.suites.datasets.manifest import load_manifest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def minea_copy(tmp_path: Path) -> Path:
    if not DATA.is_dir():
        pytest.skip("needs the pinned data")
    for path in load_manifest().files(["minea"]):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(DATA / path, tmp_path / path)
    for k in range(7):
        (tmp_path / "minea" / f"stray-{k}.txt").write_text("not in the manifest\n")
    return tmp_path


def test_counts_and_the_first_extras(minea_copy, capsys):
    assert main(["data", "verify", str(minea_copy), "--suite", "minea"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if line.startswith("extra: ")] == [
        f"extra: minea/stray-{k}.txt (not in the manifest)" for k in range(5)
    ]
    assert lines[-2] == "... and 2 more extra files (-v lists them all)"
    assert lines[-1] == (
        f"{minea_copy}: 54 files of minea: 54 verified, 0 missing, 0 changed, 7 extra (not in "
        "the manifest, not read): all verified"
    )
    assert main(["data", "verify", str(minea_copy), "--suite", "minea", "-v"]) == 0
    out = capsys.readouterr().out
    assert out.count("extra: ") == 7 and "more extra files" not in out


def test_missing_and_changed_fail(minea_copy, capsys):
    files = sorted(load_manifest().files(["minea"]))
    (minea_copy / files[0]).unlink()
    (minea_copy / files[1]).write_bytes(b"changed")
    assert main(["data", "verify", str(minea_copy), "--suite", "minea"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == [
        f"missing: {files[0]}",
        f"changed: {files[1]} (sha256 differs from the manifest)",
    ]
    assert lines[-1].endswith(
        "52 verified, 1 missing, 1 changed, 7 extra (not in the manifest, not read): FAILED"
    )
