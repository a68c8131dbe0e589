"""Independent chains of dependent model calls, as a suite asks for them (MINEA's
extraction of a document with and without its needles)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar, cast

from extractbench.suites.model import Backend

__all__ = ["run_chains"]

T = TypeVar("T")


def run_chains(model: Backend, chains: Sequence[Callable[[Backend], T]]) -> list[T]:
    """Run independent chains of dependent calls (each chain's calls depend on its earlier
    ones, never on another chain's), each called with the backend its calls go to; their
    results in chain order.

    The model a run hands to a suite runs them at once where its backend allows, each on
    its own context starting with an empty KV cache, with the answers it gives them one
    after the other (:mod:`fixtures.models.chains`); any other model (a test's double)
    runs them one after the other.

    Raises:
        The first chain's error in chain order.
    """
    runner = getattr(model, "run_chains", None)
    if callable(runner):
        return cast("list[T]", runner(chains))
    return [chain(model) for chain in chains]
