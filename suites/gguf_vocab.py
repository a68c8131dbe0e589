"""A GGUF file's tokenizer and metadata as llama-cpp-python reads them, without the weights:
the one reader of a model's vocabulary, shared by the backends that meet a GGUF file
(token counts, the layer count, the chat template: :mod:`fixtures.models.gguf`) and the
FDA chunker (:mod:`suites.fda.chunking`), so a file's vocabulary is read once per process."""

from __future__ import annotations

import atexit
import contextlib
import functools
import os
from pathlib import Path
from typing import Any

from extractbench.suites.model import ModelError

__all__ = ["vocabulary"]


def vocabulary(path: Path) -> Any:
    """The model's tokenizer and metadata without its weights (``vocab_only``: about a
    second on 2 cores for Gemma 3's 262,144 tokens), as a ``llama_cpp.Llama`` that can
    ``tokenize`` and ``detokenize`` but not generate; one per file and process while the
    file is unchanged (its size and modification time), since the probe, the context
    sizing, the chat template and the FDA chunker each ask for it.

    Raises:
        ModelError: llama.cpp cannot read the file.
    """
    try:
        stat = os.stat(path)
    except OSError as exc:
        raise ModelError(f"llama.cpp cannot load {path}: {exc}") from exc
    return _vocabulary(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=4)
def _vocabulary(path: str, size: int, mtime_ns: int) -> Any:
    from llama_cpp import Llama

    try:
        with open(os.devnull, "w") as devnull, contextlib.redirect_stderr(devnull):
            return Llama(model_path=path, vocab_only=True, verbose=False)
    except (ValueError, RuntimeError, OSError) as exc:
        raise ModelError(f"llama.cpp cannot load {path}: {exc}") from exc


# freed while llama-cpp-python's modules are still there: at interpreter shutdown its
# finaliser would find them gone
atexit.register(_vocabulary.cache_clear)
