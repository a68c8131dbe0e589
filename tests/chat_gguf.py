"""A chat-capable copy of the default model, for tests and benchmarks.

The default model (Gemma 3 270M Q4_K_M) carries no ``tokenizer.chat_template``.
:func:`templated_gguf` writes a copy of it with a Gemma-style template added, with the
``gguf`` package's ``gguf-new-metadata --chat-template`` (installed with the ``hf`` extra),
into the user cache (never the repository), once per source file and template.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from extractbench.suites.model_files import default_model_path

__all__ = ["GEMMA_STYLE_TEMPLATE", "NO_SYSTEM_THINKING_TEMPLATE", "templated_gguf"]

# Gemma's turn format: the system text begins the first user turn; the model turn is open.
GEMMA_STYLE_TEMPLATE = (
    "{{ bos_token }}"
    "{% if messages[0]['role'] == 'system' %}"
    "{% set prefix = messages[0]['content'] | trim + '\\n\\n' %}{% set turns = messages[1:] %}"
    "{% else %}{% set prefix = '' %}{% set turns = messages %}{% endif %}"
    "{% for m in turns %}"
    "{{ '<start_of_turn>' + ('model' if m['role'] == 'assistant' else 'user') + '\\n' "
    "+ (prefix if loop.first else '') + (m['content'] | trim) + '<end_of_turn>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}"
)


# Gemma 2's turn format, which rejects the system role (its template raises "System role
# not supported"), with a reasoning model's generation prompt that opens <think> (as
# DeepSeek-R1's and QwQ's do): the reply holds only the closing tag.
NO_SYSTEM_THINKING_TEMPLATE = (
    "{{ bos_token }}"
    "{% if messages[0]['role'] == 'system' %}"
    "{{ raise_exception('System role not supported') }}{% endif %}"
    "{% for m in messages %}"
    "{{ '<start_of_turn>' + ('model' if m['role'] == 'assistant' else 'user') + '\n' "
    "+ (m['content'] | trim) + '<end_of_turn>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<start_of_turn>model\n<think>\n' }}{% endif %}"
)


def templated_gguf(
    source: Path | None = None, folder: Path | None = None, template: str = GEMMA_STYLE_TEMPLATE
) -> Path:
    """The default model (or ``source``) with ``template`` (default
    :data:`GEMMA_STYLE_TEMPLATE`) as its ``tokenizer.chat_template``: built on first use
    (about 250 MB written) into ``folder`` (default: ``test-models`` in extractbench's user
    cache), reused after.

    Raises:
        RuntimeError: ``gguf-new-metadata`` failed (its output in the message).
    """
    source = source or default_model_path()
    stat = source.stat()
    digest = hashlib.sha256(
        f"{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{template}".encode()
    ).hexdigest()[:12]
    folder = folder or source.resolve().parent.parent / "test-models"
    target = folder / f"{source.stem}-chat-{digest}.gguf"
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.partial")
    done = subprocess.run(
        [sys.executable, "-m", "gguf.scripts.gguf_new_metadata", str(source), str(partial),
         "--chat-template", template, "--force"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        raise RuntimeError(f"gguf-new-metadata failed: {done.stderr[-2000:]}")
    os.replace(partial, target)  # atomic: parallel builders each write their own copy
    return target
