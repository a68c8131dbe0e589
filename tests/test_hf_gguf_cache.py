"""The kept transformers conversion of a GGUF file (fixtures/models/hf/gguf_cache.py): a
folder counts only once finished and for its own file, a failed or unwritable save leaves
nothing behind and never raises. (Loading from it is exercised by every hf test after the
first: the answers there are compared with llama.cpp's and between runs.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractbench.fixtures.models.hf import gguf_cache as hf_gguf_cache
from extractbench.fixtures.models.hf.gguf_cache import converted_folder, is_complete, save_converted

SHA = "ab" * 32


def fake_save(folder: Path, tokenizer: object, model: object) -> None:
    (folder / "model.safetensors").write_bytes(b"weights")
    if model == "fails":
        raise OSError(28, "No space left on device")
    if model == "bad config":
        raise ValueError("config.json: nested too deeply")


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv(hf_gguf_cache.CACHE_ENV, str(tmp_path / "conv"))
    monkeypatch.setattr(hf_gguf_cache, "_save", fake_save)
    return tmp_path / "conv"


def test_the_folder_is_named_by_digest_dtype_and_transformers_version(root):
    folder = converted_folder(SHA, "float32", "5.24.0")
    assert folder.parent == root and folder.name == f"{SHA[:32]}-float32-transformers-5.24.0"
    assert converted_folder(SHA, "bfloat16", "5.24.0") != folder
    assert converted_folder(SHA, "float32", "5.25.0") != folder


def test_a_saved_conversion_is_complete_for_its_own_file_only(root):
    folder = converted_folder(SHA, "float32", "5.24.0")
    assert not is_complete(folder, SHA)
    assert save_converted(folder, "tok", "model", {"gguf_sha256": SHA}) is None
    assert is_complete(folder, SHA) and not is_complete(folder, "cd" * 32)
    assert json.loads((folder / "source.json").read_text()) == {"gguf_sha256": SHA}
    assert [p.name for p in root.iterdir()] == [folder.name]  # no partial folder left
    # a second process saving the same conversion finds it there and says nothing
    assert save_converted(folder, "tok", "model", {"gguf_sha256": SHA}) is None
    assert [p.name for p in root.iterdir()] == [folder.name]


def test_a_folder_without_its_source_file_does_not_count(root):
    folder = converted_folder(SHA, "float32", "5.24.0")
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(b"half")
    assert not is_complete(folder, SHA)
    (folder / "source.json").write_text("{not json")
    assert not is_complete(folder, SHA)


def test_a_failed_save_leaves_nothing_and_says_why_in_one_line(root):
    folder = converted_folder(SHA, "float32", "5.24.0")
    problem = save_converted(folder, "tok", "fails", {"gguf_sha256": SHA})
    assert problem and "\n" not in problem and "No space left on device" in problem
    assert not folder.exists() and list(root.iterdir()) == []


def test_an_unreadable_config_is_reported_not_raised(root):
    folder = converted_folder(SHA, "float32", "5.24.0")
    problem = save_converted(folder, "tok", "bad config", {"gguf_sha256": SHA})
    assert problem and "nested too deeply" in problem and not folder.exists()


def test_an_unwritable_cache_is_reported_not_raised(tmp_path, monkeypatch):
    blocker = tmp_path / "afile"
    blocker.write_text("not a folder")
    monkeypatch.setenv(hf_gguf_cache.CACHE_ENV, str(blocker / "conv"))
    folder = converted_folder(SHA, "float32", "5.24.0")
    problem = save_converted(folder, "tok", "model", {"gguf_sha256": SHA})
    assert problem and problem.startswith("cannot write") and "\n" not in problem


def test_a_damaged_kept_conversion_is_one_error_naming_the_folder(tmp_path, monkeypatch):
    from extractbench.fixtures.models.hf.backend import HFBackend, _versions
    from extractbench.suites.model import ModelError
    from tests.conftest import require_installed

    require_installed("torch", "transformers")
    monkeypatch.setenv(hf_gguf_cache.CACHE_ENV, str(tmp_path / "conv"))
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF")  # never read: the kept conversion is loaded instead
    folder = converted_folder(SHA, "float32", _versions()["transformers"])
    folder.mkdir(parents=True)
    (folder / "source.json").write_text(json.dumps({"gguf_sha256": SHA}))
    (folder / "config.json").write_text("{truncated")
    with pytest.raises(ModelError) as caught:
        HFBackend(gguf, sha256=SHA)
    message = str(caught.value)
    assert "\n" not in message and str(folder) in message and "delete that folder" in message
