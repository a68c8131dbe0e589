"""``extractbench merge``: the run records of ``--shard 1/N`` ... ``N/N`` as one run's record.

The merged record holds every shard's items and is evaluated by the same function as a
live run (:func:`plugins.evaluation.evaluate`), so its aggregates, confidence intervals,
gates and baseline comparison are those one run of all items gives, to the last digit.
Records that did not measure the same thing are refused with one line naming the
difference: another model or judge, other generation settings, other data, another code
version, or not exactly the shards 1..N of one split.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from plugins.outputs.endpoint_stats import endpoint_stats
from plugins.outputs.record import item_counts, new_run_id
from plugins.run.shard import parse_shard
from plugins.verdict.evaluation import evaluate, leave_undecided
from plugins.verdict.gates import GateError, parse_gate

__all__ = ["MergeError", "merge_records", "SAME_IN_EVERY_SHARD"]


class MergeError(ValueError):
    """The records cannot be merged (the message names the difference)."""


def _get(record: Mapping[str, Any], path: str) -> Any:
    value: Any = record
    for key in path.split("."):
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


# What must be equal in every shard's record: what was measured and how it is decided.
SAME_IN_EVERY_SHARD: dict[str, str] = {
    "schema_version": "run-record schema",
    "code": "code version",
    "model.fingerprint": "model",
    "model.name": "model",
    "model.versions": "model library versions",
    "judge.fingerprint": "judge",
    "settings.backend": "generation settings (backend)",
    "settings.seed": "generation settings (seed)",
    "settings.limit": "item selection (--limit)",
    "settings.full": "item selection (--full)",
    "settings.suite_options": "suite options",
    "settings.gates": "gates",
    "data.manifest_version": "data manifest",
    "data.suites": "data",
}


def _shards(records: Sequence[Mapping[str, Any]], names: Sequence[str]) -> int:
    """Check the records are shards 1..N of one split; return N."""
    found: dict[int, str] = {}
    count = None
    for record, name in zip(records, names, strict=True):
        text = _get(record, "settings.shard")
        if not text:
            raise MergeError(f"{name}: not a shard's record (run without --shard K/N)")
        shard = parse_shard(text)
        if count is not None and shard.count != count:
            raise MergeError(f"{name}: shard {shard} of another split than {names[0]} (of {count})")
        count = shard.count
        if shard.index in found:
            raise MergeError(f"{name}: shard {shard} is also {found[shard.index]}")
        found[shard.index] = name
    missing = [f"{i}/{count}" for i in range(1, (count or 0) + 1) if i not in found]
    if missing:
        raise MergeError(
            f"shard {', '.join(missing)} missing: merge needs every shard of the split"
        )
    return count or 0


def _check_same(records: Sequence[Mapping[str, Any]], names: Sequence[str]) -> None:
    first = records[0]
    for record, name in zip(records[1:], names[1:], strict=True):
        for path, what in SAME_IN_EVERY_SHARD.items():
            a, b = _get(first, path), _get(record, path)
            if a != b:
                raise MergeError(f"{name}: another {what} than {names[0]} ({path}: {b!r} vs {a!r})")


def _suites(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each suite's facts; ``items_selected`` summed over the shards."""
    suites: dict[str, dict[str, Any]] = {}
    for record in records:
        for name, info in (record.get("suites") or {}).items():
            if name not in suites:
                suites[name] = dict(info)
                continue
            got = suites[name]
            if got.get("items_selected") is None or info.get("items_selected") is None:
                got["items_selected"] = None
            else:
                got["items_selected"] += info["items_selected"]
    return suites


def merge_records(
    records: Sequence[Mapping[str, Any]],
    names: Sequence[str],
    baseline: Mapping[str, Any] | None = None,
    max_regression: float | None = None,
    allow_incomparable: bool = False,
) -> dict[str, Any]:
    """The run record one run of all the shards' items would give (without the verdict:
    :func:`plugins.verdict.verdict` decides from it).

    Args:
        records: the shards' run records (any order).
        names: how to call each record in messages (its path).
        baseline: an earlier run record to compare with (as ``--baseline``), or None.
        max_regression: as ``--max-regression``.
        allow_incomparable: as ``--allow-incomparable-baseline``.

    Raises:
        MergeError: not the shards 1..N of one split, an item in two shards, or records
            that differ in model, generation settings, data or code version.
    """
    if not records:
        raise MergeError("no run records to merge")
    for record, name in zip(records, names, strict=True):
        if record.get("subset"):
            raise MergeError(
                f"{name}: made with a selection (-k, -m, --deselect or --lf) that left out "
                "items; merge shards selected by --shard alone"
            )
    count = _shards(records, names)
    _check_same(records, names)
    items: dict[str, dict[str, Any]] = {}
    for record, name in zip(records, names, strict=True):
        for item in record.get("items", []):
            if item["id"] in items:
                raise MergeError(f"{name}: item {item['id']} is in two shards")
            items[item["id"]] = item
    merged_items = [items[key] for key in sorted(items)]
    first = records[0]
    suites = _suites(records)
    skipped: dict[str, str] = {}
    for record in records:
        skipped.update(record.get("suites_skipped") or {})
    expected = sum(int(_get(r, "counts.expected") or 0) for r in records)
    interrupted = next((r["interrupted"] for r in records if r.get("interrupted")), None)
    stopped = next((r["stopped"] for r in records if r.get("stopped")), None)
    settings = {k: v for k, v in first["settings"].items() if k != "shard"}
    settings["merged_shards"] = count
    merged: dict[str, Any] = {
        "schema_version": first.get("schema_version"),
        "run_id": new_run_id(),
        "started_at": min(str(r.get("started_at", "")) for r in records),
        "duration_s": max(float(r.get("duration_s") or 0) for r in records),
        "complete": all(bool(r.get("complete")) for r in records),
        "exit_status": 0,
        "pytest_exit_status": max(int(r.get("pytest_exit_status") or 0) for r in records),
        "interrupted": interrupted,
        "stopped": stopped,
        "usage_errors": [e for r in records for e in r.get("usage_errors") or []],
        "crashes": [c for r in records for c in r.get("crashes") or []],
        "other_failures": sorted({f for r in records for f in r.get("other_failures") or []}),
        "suites_skipped": skipped,
        "output_errors": [],
        "data": first.get("data"),
        "code": first.get("code"),
        "model": first.get("model"),
        "settings": settings,
        "suites": suites,
        "counts": item_counts(merged_items, expected),
        "items": merged_items,
        "merged_from": [
            {
                "path": name,
                "run_id": r.get("run_id"),
                "shard": _get(r, "settings.shard"),
                "items": len(r.get("items", [])),
                "duration_s": r.get("duration_s"),
            }
            for r, name in zip(records, names, strict=True)
        ],  # fmt: skip
        "merged_at": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
    }
    if first.get("judge") is not None:
        merged["judge"] = first["judge"]
    endpoints = endpoint_stats(merged_items)
    if endpoints:
        merged["endpoints"] = endpoints
    # the shards' gates, with where each came from (pyproject.toml, --gate)
    try:
        gates = [
            parse_gate(g["expression"], g.get("source", "--gate")) for g in first.get("gates", [])
        ]
    except (GateError, KeyError, TypeError) as exc:
        raise MergeError(f"{names[0]}: its gates cannot be read ({exc})") from None
    merged.update(
        evaluate(
            merged_items, suites, gates, baseline, max_regression,
            skipped=skipped, allow_incomparable=allow_incomparable,
        )
    )  # fmt: skip
    if interrupted:
        leave_undecided(merged["gates"], "run interrupted")
    elif merged["crashes"]:
        leave_undecided(merged["gates"], "a process crashed while running an item")
    elif not merged["complete"]:  # an incomplete record never shows a passed gate
        leave_undecided(merged["gates"], "the run is incomplete", decided_only=True)
    return merged
