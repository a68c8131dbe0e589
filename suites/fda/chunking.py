"""Split documents into chunks of a fixed number of tokens, identically for every model.

The tokenizer is llama.cpp's, read from a GGUF file's vocabulary by the backends' own reader
(:func:`suites.gguf_vocab.vocabulary`). Loading even a vocabulary
initialises llama.cpp's device registry, and with it CUDA in a CUDA build, so the suites'
collection tokenizes in a process of its own with no GPU visible (:func:`chunk_apart`):
the process that collects, an xdist worker or the controller, leaves CUDA to the model.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from extractbench.suites import safe_json
from extractbench.suites.gguf_vocab import vocabulary

__all__ = [
    "CHUNK_TOKENS",
    "Tokenizer",
    "GemmaTokenizer",
    "chunk_apart",
    "chunk_spans",
    "ChunkingError",
    "NO_GPU_ENV",
]

CHUNK_TOKENS = 1920  # Arora et al. 2024, FDA task: "chunks of 1,920 tokens"


class ChunkingError(Exception):
    """The tokenizer's pieces do not reproduce the text, so chunks cannot be cut exactly."""


class Tokenizer(Protocol):
    """Splits text into token pieces whose bytes concatenate back to the UTF-8 text."""

    name: str

    def pieces(self, text: str) -> Sequence[bytes]:
        """The UTF-8 bytes of each token of ``text``, in order."""
        ...


class GemmaTokenizer:
    """The Gemma 3 tokenizer read from the packaged default GGUF (vocabulary only).

    Used for chunking whatever model is under test, so chunk boundaries (and therefore
    items) are the same for every model.
    """

    def __init__(self, path: Path, sha256: str) -> None:
        """Raises: ModelError: llama.cpp cannot read ``path``
        (:func:`suites.gguf_vocab.vocabulary`, the backends' reader too)."""
        self._vocab = vocabulary(path)
        self.name = f"gemma-3 tokenizer ({path.name}, sha256 {sha256[:12]})"

    def pieces(self, text: str) -> list[bytes]:
        ids = self._vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False)
        return [self._vocab.detokenize([i]) for i in ids]


def chunk_spans(
    text: str, tokenizer: Tokenizer, chunk_tokens: int = CHUNK_TOKENS
) -> list[tuple[int, int]]:
    """Character spans ``[start, end)`` of consecutive chunks of ``chunk_tokens`` tokens.

    The spans cover ``text`` exactly, without overlap; a cut is made after every
    ``chunk_tokens`` tokens of ``tokenizer``. A cut that would fall inside a multi-byte
    character (byte-fallback tokens) moves back to that character's start, so the next
    chunk may hold up to 3 byte tokens more. ``text[s:e]`` is the chunk.

    Args:
        text: the document.
        tokenizer: splits text into byte pieces that concatenate back to the text.
        chunk_tokens: tokens per chunk, > 0.

    Raises:
        ChunkingError: the pieces do not concatenate to the text's UTF-8 bytes.
        ValueError: chunk_tokens < 1.
    """
    if chunk_tokens < 1:
        raise ValueError(f"chunk_tokens must be positive, got {chunk_tokens}")
    data = text.encode("utf-8")
    pieces = tokenizer.pieces(text)
    if b"".join(pieces) != data:
        raise ChunkingError(f"{tokenizer.name}: token pieces do not reproduce the text")
    byte_cuts = [0]
    offset = 0
    for i, piece in enumerate(pieces, start=1):
        offset += len(piece)
        if i % chunk_tokens == 0 and offset < len(data):
            cut = offset
            while cut > byte_cuts[-1] and (data[cut] & 0xC0) == 0x80:
                cut -= 1
            if cut > byte_cuts[-1]:
                byte_cuts.append(cut)
    byte_cuts.append(len(data))
    char_cuts = [len(data[:cut].decode("utf-8")) for cut in byte_cuts]
    return [(a, b) for a, b in zip(char_cuts, char_cuts[1:], strict=False) if b > a]


# a process with no GPU visible to CUDA or ROCm: llama.cpp's registry lists the CPU alone
NO_GPU_ENV = {"CUDA_VISIBLE_DEVICES": "", "HIP_VISIBLE_DEVICES": "", "ROCR_VISIBLE_DEVICES": ""}
CHILD_TIMEOUT_S = 1800  # a large user corpus on a slow machine; a stuck child ends the wait


def chunk_apart(
    docs: dict[str, str], path: Path, sha256: str
) -> tuple[dict[str, list[tuple[int, int]]], str]:
    """Each document's chunk spans (:func:`chunk_spans` with :class:`GemmaTokenizer` of
    ``path``), computed in a child Python process with no GPU visible (:data:`NO_GPU_ENV`),
    so this process initialises neither llama.cpp nor CUDA; and the tokenizer's name.

    Raises:
        ChunkingError: a document's pieces do not reproduce its text, or the child failed
            (its last line of error output).
    """
    import extractbench

    root = str(Path(extractbench.__file__).resolve().parents[1])  # the package's folder
    env = {**os.environ, **NO_GPU_ENV}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    payload = json.dumps({"model": str(path), "sha256": sha256, "docs": docs})
    try:
        done = subprocess.run(
            [sys.executable, "-m", "extractbench.suites.fda.chunking"], input=payload,
            capture_output=True, text=True, encoding="utf-8", env=env, timeout=CHILD_TIMEOUT_S,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ChunkingError(f"the tokenizer process did not finish: {exc}") from None
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise ChunkingError(tail.removeprefix("ChunkingError: "))
    out = safe_json.loads(done.stdout)
    return {k: [(int(a), int(b)) for a, b in v] for k, v in out["spans"].items()}, out["tokenizer"]


def _child() -> int:
    """``python -m extractbench.suites.fda.chunking``: JSON ``{"model", "sha256", "docs"}``
    on stdin, ``{"tokenizer", "spans"}`` on stdout; a chunking error on stderr, exit 3."""
    request = safe_json.loads(sys.stdin.read())
    tokenizer = GemmaTokenizer(Path(request["model"]), request["sha256"])
    try:
        spans = {doc: chunk_spans(text, tokenizer) for doc, text in sorted(request["docs"].items())}
    except ChunkingError as exc:
        print(f"ChunkingError: {exc}", file=sys.stderr)
        return 3
    json.dump({"tokenizer": tokenizer.name, "spans": spans}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(_child())
