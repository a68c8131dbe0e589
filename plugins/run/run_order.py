"""``--stop-when-decided``: which suites may stop early, and the random order their items run in.

A suite may stop early when it has a gate on a mean and every gate of it (a minimum n
and a count known before the first item, ``kv/missing_labels``, aside: the verdict
decides those from the suite's data) is on the mean of a metric with a finite declared
range, or on its interval's bound on the side the gate asks (``:ci_low >=``, ``:ci_high <=``)
(:func:`plugins.verdict.sequential_gates.sequential_gate`), and each metric a regression
check against a baseline compares (``--baseline --max-regression``) has a finite range
(its paired sequence decides it). Its groups (the units that share a prompt prefix,
run on one worker, consecutively) then run in a pseudo-random order fixed by the order
seed: ranked by SHA-256 of the seed and the group's id, so the order is the same on every
machine, worker and Python, and a group's items stay together (the prefix cache still
reuses the chunk). The confidence sequences need the groups drawn uniformly at random
without replacement, which such a ranking gives (an order stratified by the breakdown's
levels would not be a uniform draw; the decision reports the levels it saw instead).

The order seed is not the generation ``--seed``: by default it is derived from the
model's digest and the suite's item ids (:func:`order_seed`), so a rerun of the same model
on the same items runs the same order and a retry cannot buy another draw of the wrong
PASS; ``--order-seed N`` picks another order, recorded and shown in the gate's verdict.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Sequence

import pytest

from extractbench.plugins.record import RunOrder
from extractbench.plugins.run.config import RunConfig
from extractbench.plugins.run.selection import rank
from extractbench.plugins.verdict.sequential_gates import known_before_items, sequential_gate
from extractbench.suites.item import Item
from extractbench.suites.protocol import Suite

__all__ = ["stops_when_decided", "stop_ranges", "order_seed", "order_items", "running_order"]


def stops_when_decided(config: pytest.Config, cfg: RunConfig) -> bool:
    """``--stop-when-decided`` / ``--no-stop-when-decided``, else ``[tool.extractbench]
    stop_when_decided``. Never for a shard (a shard decides no gate, and its sequence would
    cover its own items only) nor for ``--rescore`` (it replays its record's items, and
    the record's order decides).

    Raises:
        pytest.UsageError: ``--stop-when-decided`` with ``--shard``, or with
            ``--max-slowdown`` against a baseline (one line each).
    """
    given = config.getoption("stop_when_decided")
    if given and cfg.shard is not None:
        raise pytest.UsageError(
            f"--stop-when-decided with --shard {cfg.shard}: a shard decides no gate and its "
            "sequence would cover its own items only; run the suites whole to stop early"
        )
    wanted = cfg.settings.stop_when_decided if given is None else bool(given)
    wanted = wanted and cfg.shard is None and cfg.rescore is None
    if wanted and cfg.gates.baseline is not None and cfg.gates.max_slowdown is not None:
        # a stopped run's speed is that of its first groups, the baseline's of every item
        raise pytest.UsageError(
            f"--stop-when-decided with --max-slowdown {cfg.gates.max_slowdown:g}: a speed "
            "comparison needs a full run (its speed over every item, as the baseline's); "
            "drop --max-slowdown or run with --no-stop-when-decided"
        )
    return wanted


def _finite(suite: Suite, metric: str) -> list[float] | None:
    low, high = suite.score_range(metric)
    if suite.knows_metric(metric) and math.isfinite(low) and math.isfinite(high) and high > low:
        return [float(low), float(high)]
    return None


def stop_ranges(
    cfg: RunConfig, suite: Suite, compared: Collection[str] = ()
) -> dict[str, list[float]] | None:
    """The declared range of each gated or compared metric of ``suite`` when every gate of
    it and every regression check can be decided by a confidence sequence (see the module
    docstring), else None.

    Args:
        compared: the metrics of the suite (without its prefix) the baseline scored, when
            the run checks for regressions (``--baseline --max-regression``).
    """
    gates = [g for g in cfg.gates.thresholds if g.suite == suite.name]
    ranges = {}
    for gate in gates:
        metric = gate.metric.partition("/")[2]
        if gate.stat in ("mean", "ci_low", "ci_high") and (bounds := _finite(suite, metric)):
            ranges[metric] = bounds
    for metric in compared:
        if (bounds := _finite(suite, metric)) is None:
            return None  # a metric no sequence can compare: every item runs
        ranges[metric] = bounds
    deciding = [g for g in gates if g.stat != "n" and not known_before_items(g)]
    if not (deciding or compared) or not all(sequential_gate(g, ranges) for g in deciding):
        return None
    return ranges


def order_seed(model_digest: str, item_ids: Collection[str]) -> int:
    """The default order seed: the first 63 bits of SHA-256 over the model's digest and the
    suite's item ids (sorted, one a line), the same for a model and suite on every machine.

    Args:
        model_digest: the model file's SHA-256, or its fingerprint where it has no file
            (an endpoint).
        item_ids: the ids of the suite's selected items.
    """
    text = "\n".join([model_digest, *sorted(item_ids)])
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:16], 16) >> 1


def order_items(
    items: Sequence[Item],
    seed: int,
    stratum: str | None,
    ranges: dict[str, list[float]],
    seed_given: bool = False,
    metric_ranges: dict[str, list[float] | None] | None = None,
) -> tuple[list[Item], RunOrder]:
    """The items with their groups in the order fixed by ``seed`` (a group's items in
    their own order), and that order for the record.

    Args:
        items: the suite's selected items.
        seed: the order seed (:func:`order_seed`, or ``--order-seed``).
        stratum: the suite's first breakdown attribute, or None.
        ranges: each gated metric's declared range (:func:`stop_ranges`).
        seed_given: ``seed`` is ``--order-seed``'s.
        metric_ranges: the suite's declared ranges by metric pattern (``Suite.ranges``).
    """
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.group, []).append(item)
    ordered = sorted(groups, key=lambda g: rank(f"{seed}/{g}"))
    strata = sorted({str(it.meta.get(stratum)) for it in items}) if stratum else []
    order = RunOrder(
        seed=seed, seed_given=seed_given, groups=[[it.id for it in groups[g]] for g in ordered], stratum=stratum,
        strata=strata, ranges=ranges, metric_ranges=metric_ranges or {},
    )  # fmt: skip
    return [it for g in ordered for it in groups[g]], order


def running_order(order: RunOrder, running: Collection[Item]) -> RunOrder:
    """``order`` cut to the items that really run (after ``-k``, ``-m``, ``--deselect``
    with ``--allow-subset``: the sequence covers the subset)."""
    ids = {it.id for it in running}
    groups = [[i for i in group if i in ids] for group in order.groups]
    stratum = order.stratum
    strata = sorted({str(it.meta.get(stratum)) for it in running}) if stratum else []
    return order.model_copy(update={"groups": [g for g in groups if g], "strata": strata})
