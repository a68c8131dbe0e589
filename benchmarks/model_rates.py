"""The default model's prefill and decode rates on this machine, measured one way for every
benchmark that sets a run beside its physical bound (``suite_bounds.py``,
``lm_eval_compare.py``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from extractbench.suites.model_files import default_model_path  # noqa: E402

__all__ = ["rates_at", "curve_at"]


def rates_at(n_threads: int, tokens: list[int]) -> tuple[float, float]:
    """(prefill, decode) tokens/s of the default model with ``n_threads`` threads: one
    prefill of ``tokens`` (in a context just large enough, batch 512 as the harness), then
    64 single-token decodes after it. Loaded as the harness loads it (``--weight-repack
    auto``). Used by ``suite_bounds.py`` and ``lm_eval_compare.py``."""
    import contextlib

    from llama_cpp import Llama

    from extractbench.fixtures.models.llama_cpp.repack import decide_here, no_extra_buffers

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


def curve_at(
    n_threads: int, tokens: list[int], lengths: list[int], decodes: int = 16
) -> dict[str, object]:
    """The default model's costs by context length with ``n_threads`` threads, loaded as the
    harness loads it: one prefill of ``tokens[:lengths[-1]]`` in steps that end on the
    lengths, each step timed (the cumulative prefill seconds ``T(L)``; with lengths that are
    multiples of the 512-token batch the prefill runs in the batches one whole prompt's
    would), and after each step ``decodes`` single-token decodes, timed apart (a sliding-
    window cache cannot drop its tail, so the decodes stay in the context: later positions
    move by ``decodes`` per step). Returns ``load_s``, ``lengths``, ``prefill_s`` and
    ``decode_tok_s`` (this process alone)."""
    import contextlib

    from llama_cpp import Llama

    from extractbench.fixtures.models.llama_cpp.repack import decide_here, no_extra_buffers

    loading = contextlib.nullcontext() if decide_here("auto").repack else no_extra_buffers()
    start = time.perf_counter()
    with loading:
        llm = Llama(
            str(default_model_path()),
            n_ctx=lengths[-1] + decodes * len(lengths) + 8,
            n_threads=n_threads,
            n_threads_batch=n_threads,
            n_batch=512,
            verbose=False,
        )
    load_s = time.perf_counter() - start
    llm.reset()
    prefill, decode, done, spent = [], [], 0, 0.0
    for length in lengths:
        start = time.perf_counter()
        llm.eval(tokens[done:length])
        spent += time.perf_counter() - start
        prefill.append(spent)
        done = length
        start = time.perf_counter()
        for _ in range(decodes):
            llm.eval([tokens[length - 1]])
        decode.append(decodes / (time.perf_counter() - start))
    return {"load_s": load_s, "lengths": lengths, "prefill_s": prefill, "decode_tok_s": decode}


def main() -> None:
    """Print the rates for a prompt of ``--tokens`` tokens of an FDA-like text."""
    import argparse

    from extractbench.suites.gguf_vocab import vocabulary

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
