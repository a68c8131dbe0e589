"""The default model's prefill and decode rates on this machine, measured one way for every
benchmark that sets a run beside its physical bound (``suite_bounds.py``,
``lm_eval_compare.py``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from extractbench.suites.model_files import default_model_path  # noqa: E402

__all__ = ["rates_at"]


def rates_at(n_threads: int, tokens: list[int]) -> tuple[float, float]:
    """(prefill, decode) tokens/s of the default model with ``n_threads`` threads: one
    prefill of ``tokens`` (in a context just large enough, batch 512 as the harness), then
    64 single-token decodes after it. Loaded as the harness loads it (``--weight-repack
    auto``). Used by ``suite_bounds.py`` and ``lm_eval_compare.py``."""
    import contextlib

    from extractbench.fixtures.models.repack import decide_here, no_extra_buffers
    from llama_cpp import Llama

    loading = contextlib.nullcontext() if decide_here("auto").repack else no_extra_buffers()
    with loading:  # as the harness loads it (AMX CPUs: no repacking)
        llm = Llama(
            str(default_model_path()),
            n_ctx=len(tokens) + 128,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            n_batch=512,
            verbose=False,
        )
    llm.reset()
    start = time.perf_counter()
    llm.eval(tokens)
    prefill = len(tokens) / (time.perf_counter() - start)
    start = time.perf_counter()
    for _ in range(64):
        llm.eval([tokens[-1]])
    return prefill, 64 / (time.perf_counter() - start)


def main() -> None:
    """Print the rates for a prompt of ``--tokens`` tokens of an FDA-like text."""
    import argparse

    from extractbench.fixtures.models.llama_cpp import vocabulary

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=2, help="llama.cpp threads (default 2)")
    parser.add_argument("--tokens", type=int, default=1900, help="prompt tokens (default 1900)")
    args = parser.parse_args()
    text = "Applicant: Roche Diagnostics. Measurand: sodium in serum and plasma. " * 400
    tokens = vocabulary(default_model_path()).tokenize(text.encode(), add_bos=True)[: args.tokens]
    prefill, decode = rates_at(args.threads, tokens)
    print(
        f"{len(tokens)} tokens, {args.threads} threads: prefill {prefill:.1f} t/s, decode {decode:.1f} t/s"
    )


if __name__ == "__main__":
    main()
