"""Writes confseq_hedged_cs.json: the bounds of confseq's ``hedged_cs`` (the authors' own
implementation of the hedged capital confidence sequence, sampling without replacement)
on a few fixed sequences, which tests/test_sequential.py compares with
``plugins.verdict.sequential.HedgedCS``.

confseq is not a dependency (it builds against Boost and numpy < 2); to write the file
again, in an environment of its own::

    apt-get install libboost-dev
    pip install "numpy<2" scipy "pybind11>=2.10" scikit-build cmake ninja
    pip install --no-build-isolation confseq==0.0.11
    python tests/data/confseq_hedged_cs.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from confseq.betting import hedged_cs

CASES = {  # name -> (population, how many of it are drawn)
    "binary-120-all": ("binary", 120, 120),
    "beta-80-half": ("beta", 80, 40),
    "four-levels-60-all": ("levels", 60, 60),
    "binary-rare-200-150": ("rare", 200, 150),
}


def population(kind: str, size: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "binary":
        return (rng.random(size) < 0.55).astype(float)
    if kind == "beta":
        return rng.beta(2.0, 5.0, size)
    if kind == "levels":
        return rng.choice([0.0, 0.25, 0.5, 1.0], size)
    return (rng.random(size) < 0.05).astype(float)


def main() -> None:
    rng = np.random.default_rng(20260101)
    out = {}
    for name, (kind, size, drawn) in CASES.items():
        x = rng.permutation(population(kind, size, rng))[:drawn]
        low, high = hedged_cs(x, alpha=0.05, N=size)
        out[name] = {"N": size, "x": x.tolist(), "low": low.tolist(), "high": high.tolist()}
    path = Path(__file__).with_suffix(".json")
    path.write_text(json.dumps({"confseq": "0.0.11", "alpha": 0.05, "cases": out}) + "\n")


if __name__ == "__main__":
    main()
