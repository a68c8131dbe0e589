"""``benchmarks/team_invoices.py``, the README's team example at a size where an early stop
can decide: every field it writes is found in its document by the ``kv`` suite's own loader
(``missing_labels`` empty, three items per invoice, one group each), and a seed writes the
same project byte for byte."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

import pytest

from extractbench.suites.kv.items import load_items
from extractbench.suites.kv.options import KvOptions

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "team_invoices.py"


def _module():
    spec = importlib.util.spec_from_file_location("team_invoices", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_every_field_written_is_found_in_its_document_by_the_kv_loader(tmp_path):
    n = _module().write_project(tmp_path, invoices=40, seed=3)
    data = load_items(None, KvOptions(path=tmp_path / "items.jsonl"))
    assert n == 120 and len(data.items) == 120
    assert data.missing_labels == []
    groups: dict[str, int] = {}
    for item in data.items:
        groups[item.group] = groups.get(item.group, 0) + 1
    assert len(groups) == 40 and set(groups.values()) == {3}
    config = tomllib.loads((tmp_path / "pyproject.toml").read_text())
    assert config["tool"]["extractbench"]["gates"] == {
        "kv/accuracy:ci_low": ">= 0.15", "kv/missing_labels": "<= 0",
    }  # fmt: skip


def test_a_seed_writes_the_same_project_and_another_seed_another(tmp_path):
    module = _module()
    module.write_project(tmp_path / "a", invoices=12, seed=5)
    module.write_project(tmp_path / "b", invoices=12, seed=5)
    module.write_project(tmp_path / "c", invoices=12, seed=6)
    assert _files(tmp_path / "a") == _files(tmp_path / "b")
    assert _files(tmp_path / "a") != _files(tmp_path / "c")
    with pytest.raises(FileExistsError):
        module.write_project(tmp_path / "a", invoices=12, seed=5)
