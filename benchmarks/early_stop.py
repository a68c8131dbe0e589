"""``--stop-when-decided``: how many items a gate needs before its confidence sequence
decides it, against the gate's margin (the suite's mean minus its threshold).

1. **A recorded run** (``--record RUN.json``, a full run of every item, e.g.
   ``pytest suites/fda -n 2 --report-json RUN.json``): for each threshold at
   ``mean + margin`` the run's own per-item scores are replayed in ``--orders`` random
   orders of their groups (seeds 0, 1, ...; the order ``--seed`` gives a live run) through
   the sequence the live run's controller uses (``plugins.verdict.sequential_gates``):
   items run before the decision (median, 10th and 90th percentile over the orders), the
   share of orders that decided early, and the share whose decision differs from that of
   the full run's mean (an error of the sequence, at most 5% at any margin).
2. **Simulated suites** (``--simulate``): ``--items`` binary items of mean 0.5 (each its
   own group), thresholds at ``0.5 - margin``, ``--runs`` random orders at once
   (``plugins.verdict.sequential.HedgedCS`` at the gates' level, 5% per side): the same
   columns, and the oracle's: a capital process that bets a constant fraction, the best
   one knowing the mean (the Kelly bet on binary values, ``|mean - threshold| /
   (threshold (1 - threshold))``, truncated as the sequence's), on the without-replacement
   centre ``m_t`` and deciding when its capital reaches ``1 / alpha``; the ratio is the
   sequence's median items over the oracle's (1.0: as good as knowing the mean).
3. The cost of one update of a suite's sequence (per group, microseconds).

Prints markdown tables (the ones in docs/performance.md). Run:

    python benchmarks/early_stop.py --record reports/fda-full.json --metric fda/accuracy
    python benchmarks/early_stop.py --simulate --items 1600 --runs 200
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from extractbench.plugins.record import load_record  # noqa: E402
from extractbench.plugins.run.run_order import order_items  # noqa: E402
from extractbench.plugins.verdict.gates import parse_gate  # noqa: E402
from extractbench.plugins.verdict.sequential import HedgedCS  # noqa: E402
from extractbench.plugins.verdict.sequential_gates import ALPHA, SuiteSequence  # noqa: E402

MARGINS = (-0.3, -0.2, -0.1, -0.05, -0.02, -0.01, 0.0, 0.01, 0.02, 0.05, 0.1, 0.2)
HEADER = (
    "| margin | threshold | decision | items run (median) | 10th–90th pct | decided early "
    "| wrong |\n|---:|---:|---|---:|---|---:|---:|"
)


def _row(margin: float, threshold: float, truth: bool, ns: list[int], passed: list[bool],
         total: int) -> str:  # fmt: skip
    low, high = np.percentile(ns, [10, 90])
    early = sum(n < total for n in ns) / len(ns)
    wrong = sum(p != truth for p in passed) / len(passed)
    word = "PASS" if truth else "FAIL"
    return (
        f"| {margin:+.2f} | {threshold:.4f} | {word} | {statistics.median(ns):,.0f} of {total:,} "
        f"| {low:,.0f}–{high:,.0f} | {early:.0%} | {wrong:.1%} |"
    )


def recorded(path: Path, metric: str, orders: int) -> None:
    """Table 1: the record's scores replayed in ``orders`` orders per threshold."""
    record = load_record(path)
    suite, _, name = metric.partition("/")
    items = [it for it in record.items if it.suite == suite and it.outcome == "passed"]
    if len(items) < record.suites[suite].items_selected:
        sys.exit(f"{path}: {suite} is not complete; the benchmark replays a full run")
    mean = statistics.fmean(it.scores[name] for it in items)
    stratum = (record.suites[suite].breakdown or [None])[0]
    drawn = [order_items(items, seed, stratum, {name: [0.0, 1.0]}) for seed in range(orders)]
    print(f"\n{path.name}: {metric} = {mean:.4f} over {len(items):,} items "
          f"({len(drawn[0][1].groups)} groups), {orders} orders\n\n{HEADER}")  # fmt: skip
    timings = []
    for margin in MARGINS:
        threshold = round(mean + margin, 4)
        if not 0 < threshold < 1:
            continue
        gate = parse_gate(f"{metric}>={threshold}")
        ns, passed = [], []
        for ordered, order in drawn:
            sequence = SuiteSequence(order, [gate])
            start = time.perf_counter()
            for it in ordered:
                sequence.add(it.id, True, it.scores, it.meta)
                if sequence.decided:
                    break
            timings.append((time.perf_counter() - start) / max(sequence.next_group, 1))
            decision = sequence.decisions[gate.expression]
            ns.append(decision.sequence.n)
            passed.append(decision.passed)
        print(_row(margin, threshold, mean >= threshold, ns, passed, len(items)))
    print(f"\none update of the suite's sequence: {statistics.median(timings) * 1e6:,.0f} µs "
          "per group (median)")  # fmt: skip


def simulated(items: int, runs: int) -> None:
    """Table 2: binary items of mean 0.5, ``runs`` orders at once, per margin."""
    rng = np.random.default_rng(0)
    population = (np.arange(items) < items // 2).astype(float)
    draws = rng.permuted(np.tile(population, (runs, 1)), axis=1)
    header = HEADER.replace("| wrong |\n", "| wrong | oracle items (median) | ratio |\n")
    print(f"\nsimulated: {items:,} binary items of mean 0.5000, {runs} orders\n\n"
          f"{header}---:|---:|")  # fmt: skip
    for margin in MARGINS:
        threshold = round(0.5 + margin, 4)
        if not 0 < threshold < 1:
            continue
        cs = HedgedCS(items, 2 * ALPHA, runs=runs)
        n = np.full(runs, items)
        passed = np.full(runs, 0.5 >= threshold)
        open_ = np.ones(runs, dtype=bool)
        for t in range(items):
            cs.update(draws[:, t])
            decided = open_ & ((cs.low >= threshold) | (cs.high < threshold))
            n[decided] = t + 1
            passed[decided] = cs.low[decided] >= threshold
            open_ &= ~decided
            if not open_.any():
                break
        oracle = oracle_items(draws, 0.5, threshold)
        ratio = statistics.median(n.tolist()) / statistics.median(oracle.tolist())
        print(_row(margin, threshold, 0.5 >= threshold, n.tolist(), passed.tolist(), items)
              + f" {statistics.median(oracle.tolist()):,.0f} | {ratio:.2f} |")  # fmt: skip


def oracle_items(draws: np.ndarray, mean: float, threshold: float) -> np.ndarray:
    """Items before the oracle decides, per order (``N`` when it never does): the capital
    ``prod(1 + s l (X_t - m_t))`` with the constant Kelly bet ``l`` for binary values of
    ``mean`` against ``threshold`` (``s`` the side, +1 when the mean is above), ``m_t`` the
    threshold's without-replacement centre, truncated as the sequence's bets (``l <= 1 /
    (2 m_t)`` upward, ``1 / (2 (1 - m_t))`` downward), deciding at capital ``1 / ALPHA``.

    Args:
        draws: shape ``(runs, N)``, values in [0, 1] in run order.
    """
    runs, size = draws.shape
    if mean == threshold:
        return np.full(runs, size)
    side = 1.0 if mean > threshold else -1.0
    bet = abs(mean - threshold) / (threshold * (1 - threshold))
    totals = np.concatenate([np.zeros((runs, 1)), np.cumsum(draws, axis=1)[:, :-1]], axis=1)
    centre = (size * threshold - totals) / (size - np.arange(size))
    centre = np.clip(centre, 1e-12, 1 - 1e-12)
    cap = 0.5 / (centre if side > 0 else 1 - centre)
    log_capital = np.cumsum(np.log1p(side * np.minimum(bet, cap) * (draws - centre)), axis=1)
    crossed = log_capital >= np.log(1 / ALPHA)
    return np.where(crossed.any(axis=1), crossed.argmax(axis=1) + 1, size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", type=Path, help="a run record of a full run")
    parser.add_argument(
        "--metric", default="fda/accuracy", help="suite/metric (default fda/accuracy)"
    )
    parser.add_argument("--orders", type=int, default=200, help="random orders per threshold")
    parser.add_argument("--simulate", action="store_true", help="the simulated suites' table")
    parser.add_argument("--items", type=int, default=1600, help="simulated items (default 1600)")
    parser.add_argument("--runs", type=int, default=200, help="simulated orders (default 200)")
    args = parser.parse_args()
    if args.record is None and not args.simulate:
        parser.error("give --record RUN.json, --simulate or both")
    if args.record is not None:
        recorded(args.record, args.metric, args.orders)
    if args.simulate:
        simulated(args.items, args.runs)


if __name__ == "__main__":
    main()
