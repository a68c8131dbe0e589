"""A run's speed per suite, from the model calls its record logs, and its change against a
baseline.

Every item logs its model calls (``ItemEntry.calls``: ``prompt_tokens``,
``completion_tokens``, ``latency_s``, ``cached``, and where the backend measured it,
``prefill_s``: the seconds spent reading the prompt, ``reused_prompt_tokens``: prompt tokens
taken from the backend's KV cache). Calls answered from the cache or a run record took no
time in this run: they count in ``cached_share`` and are left out of every speed figure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from extractbench.plugins.record.values import SpeedChange, SpeedStats

__all__ = [
    "SPEED_METRICS",
    "LOWER_IS_BETTER",
    "speed_stats",
    "speed_changes",
]

# metric -> True when a lower value is better (a latency); the figures a baseline compares
LOWER_IS_BETTER: dict[str, bool] = {
    "items_per_s": False,
    "prefill_tokens_per_s": False,
    "decode_tokens_per_s": False,
    "latency_p50_s": True,
    "latency_p95_s": True,
    "latency_max_s": True,
}
SPEED_METRICS = (
    "items_per_s", "prompt_tokens", "generated_tokens", "prefill_tokens_per_s",
    "decode_tokens_per_s", "latency_p50_s", "latency_p95_s", "latency_max_s", "calls",
    "cached_calls", "cached_share", "prefix_reuse_share",
)  # fmt: skip


def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def _suite_stats(calls: list[dict[str, Any]], items: int) -> SpeedStats:
    live = [c for c in calls if not c.get("cached", False)]
    seconds = math.fsum(float(c.get("latency_s") or 0.0) for c in live)
    split = [c for c in live if c.get("prefill_s") is not None]
    prefill_s = math.fsum(float(c["prefill_s"]) for c in split)
    read = sum(
        int(c.get("prompt_tokens", 0)) - int(c.get("reused_prompt_tokens") or 0) for c in split
    )
    decode_s = math.fsum(float(c.get("latency_s") or 0.0) - float(c["prefill_s"]) for c in split)
    reporting = [c for c in live if c.get("reused_prompt_tokens") is not None]
    reused = sum(int(c["reused_prompt_tokens"]) for c in reporting)
    latencies = np.array([float(c.get("latency_s") or 0.0) for c in live])
    p50, p95 = np.percentile(latencies, [50, 95]) if live else (None, None)
    return SpeedStats(
        items_per_s=_ratio(items, seconds),
        prompt_tokens=sum(int(c.get("prompt_tokens", 0)) for c in live),
        generated_tokens=sum(int(c.get("completion_tokens", 0)) for c in live),
        prefill_tokens_per_s=_ratio(read, prefill_s),
        decode_tokens_per_s=_ratio(
            sum(int(c.get("completion_tokens", 0)) for c in split), decode_s
        ),
        latency_p50_s=None if p50 is None else float(p50),
        latency_p95_s=None if p95 is None else float(p95),
        latency_max_s=float(latencies.max()) if live else None,
        calls=len(calls),
        cached_calls=len(calls) - len(live),
        cached_share=_ratio(len(calls) - len(live), len(calls)),
        reused_prompt_tokens=reused if reporting else None,
        prefix_reuse_share=_ratio(reused, sum(int(c.get("prompt_tokens", 0)) for c in reporting)),
    )


def speed_stats(items: Iterable[Mapping[str, Any]]) -> dict[str, SpeedStats]:
    """Speed per suite of the items' logged calls (see :class:`SpeedStats`).

    Args:
        items: item records with ``suite`` and ``calls`` (a run record's ``items``, any
            outcome: a failed item's calls took time too).

    Returns:
        suite -> :class:`SpeedStats`, suites sorted; a suite without any call is left out.
    """
    calls: dict[str, list[dict[str, Any]]] = {}
    timed: dict[str, int] = {}
    for item in items:
        logged = list(item.get("calls") or [])
        if logged:
            calls.setdefault(item["suite"], []).extend(logged)
            timed[item["suite"]] = timed.get(item["suite"], 0) + any(
                not c.get("cached", False) for c in logged
            )
    return {suite: _suite_stats(calls[suite], timed[suite]) for suite in sorted(calls)}


def speed_values(speed: Mapping[str, SpeedStats]) -> dict[str, dict[str, float]]:
    """``suite/metric`` -> ``{"mean": value, "n": uncached calls}`` for every speed figure
    with a value, as a gate reads a metric (a speed figure has no interval)."""
    out = {}
    for suite, stats in speed.items():
        n = stats.calls - stats.cached_calls
        for metric in SPEED_METRICS:
            value = getattr(stats, metric)
            if value is not None:
                out[f"{suite}/{metric}"] = {"mean": float(value), "n": n}
    return out


def speed_changes(
    current: Mapping[str, SpeedStats],
    baseline: Mapping[str, SpeedStats],
    max_slowdown: float | None,
) -> list[SpeedChange]:
    """Each speed figure of :data:`LOWER_IS_BETTER` of the suites in both runs against the
    baseline's (a ratio of the two runs' figures: no interval).

    Args:
        current, baseline: :func:`speed_stats` of the two runs.
        max_slowdown: the tolerated slowdown (0.2: 20%); None reports without failing.
    """
    changes = []
    for suite in sorted(set(current) & set(baseline)):
        for metric, lower in LOWER_IS_BETTER.items():
            cur, base = getattr(current[suite], metric), getattr(baseline[suite], metric)
            slowdown = None
            if cur is not None and base is not None:
                slowdown = _ratio(cur, base) if lower else _ratio(base, cur)
                slowdown = None if slowdown is None else slowdown - 1.0
            failed = max_slowdown is not None and slowdown is not None and slowdown > max_slowdown
            changes.append(SpeedChange(metric=f"{suite}/{metric}", current=cur, baseline=base,
                                       slowdown=slowdown, failed=failed))  # fmt: skip
    return changes


_UNITS = {"items_per_s": "items/s", "prefill_tokens_per_s": "tokens/s",
          "decode_tokens_per_s": "tokens/s"}  # fmt: skip


def change_text(change: SpeedChange | Mapping[str, Any]) -> str:
    """A speed change as rates, new against baseline: ``14.6 vs 0.27 items/s, 54x faster``,
    ``p95 2.1 vs 0.52 s, 4.04x slower``; ``"-"`` when either figure is missing.

    The factor is the larger figure over the smaller (a percentage of a rate that grew 54
    times reads "98.2% faster" and hides it); 3 significant digits per figure.
    """
    c = change if isinstance(change, Mapping) else change.model_dump()
    current, base = c.get("current"), c.get("baseline")
    if current is None or base is None:
        return "-"
    metric = str(c["metric"]).rsplit("/", 1)[-1]
    lower = LOWER_IS_BETTER.get(metric, False)
    unit = _UNITS.get(metric) or "s"
    label = "" if metric in _UNITS else metric.removeprefix("latency_").removesuffix("_s") + " "
    figures = f"{label}{current:.3g} vs {base:.3g} {unit}"
    if current == base:
        return f"{figures}, the same"
    if min(current, base) <= 0:
        return figures
    factor = max(current, base) / min(current, base)
    better = (current < base) if lower else (current > base)
    times = f"{factor:.0f}x" if factor >= 10 else f"{factor:.2f}x"
    return f"{figures}, {times} {'faster' if better else 'slower'}"


def check_max_slowdown(value: float | None, has_baseline: bool) -> float | None:
    """``--max-slowdown`` as given (None: not given).

    Raises:
        ValueError: (one line) it is not a finite number >= 0, or there is no baseline.
    """
    if value is not None and (not math.isfinite(value) or value < 0 or not has_baseline):
        raise ValueError(f"--max-slowdown {value}: needs --baseline and a finite value >= 0")
    return value


__all__ += ["speed_values", "check_max_slowdown", "change_text"]
