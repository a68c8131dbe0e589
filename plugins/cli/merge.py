"""``extractbench merge``: the run records of ``--shard 1/N`` ... ``N/N`` as one run's record.

The merged record holds every shard's items and is evaluated by the same function as a
live run (:func:`plugins.verdict.decide`), so its aggregates, confidence intervals,
gates and baseline comparison are those one run of all items gives, to the last digit.
Records that did not measure the same thing are refused with one line naming the
difference: another model or judge, other generation settings, other data, another code
version, or not exactly the shards 1..N of one split.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from extractbench.fixtures.models.chat import chat_facts
from extractbench.plugins.outputs.endpoint_stats import endpoint_stats
from extractbench.plugins.record import (
    MergedShard,
    RunRecord,
    Selection,
    SuiteInfo,
    item_counts,
    new_run_id,
)
from extractbench.plugins.run.shard import parse_shard
from extractbench.plugins.verdict.gates import Gate, GateError, parse_gate

__all__ = ["MergeError", "merge_records", "record_gates", "SAME_IN_EVERY_SHARD"]


class MergeError(ValueError):
    """The records cannot be merged (the message names the difference)."""


def _get(record: RunRecord, path: str) -> Any:
    """A dotted field of a record as JSON data (``model.fingerprint``)."""
    head, _, rest = path.partition(".")
    value: Any = getattr(record, head, None)
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    for key in rest.split(".") if rest else ():
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


def _shards(records: Sequence[RunRecord], names: Sequence[str]) -> int:
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


def _check_same(records: Sequence[RunRecord], names: Sequence[str]) -> None:
    first = records[0]
    for record, name in zip(records[1:], names[1:], strict=True):
        for path, what in SAME_IN_EVERY_SHARD.items():
            a, b = _get(first, path), _get(record, path)
            if a != b:
                raise MergeError(f"{name}: another {what} than {names[0]} ({path}: {b!r} vs {a!r})")


def _suites(records: Sequence[RunRecord]) -> dict[str, SuiteInfo]:
    """Each suite's facts; ``items_selected`` summed over the shards."""
    suites: dict[str, dict[str, Any]] = {}
    for record in records:
        for name, model in record.suites.items():
            info = model.model_dump(mode="json")
            if name not in suites:
                suites[name] = info
                continue
            got = suites[name]
            if got.get("items_selected") is None or info.get("items_selected") is None:
                got["items_selected"] = None
            else:
                got["items_selected"] += info["items_selected"]
    return {name: SuiteInfo.model_validate(info) for name, info in suites.items()}


def record_gates(record: RunRecord, where: str) -> tuple[Gate, ...]:
    """The gates a record was decided on, each with where it came from.

    Raises:
        MergeError: a gate of the record cannot be parsed.
    """
    try:
        return tuple(parse_gate(g.expression, g.source) for g in record.gates)
    except GateError as exc:
        raise MergeError(f"{where}: its gates cannot be read ({exc})") from None


def merge_records(records: Sequence[RunRecord], names: Sequence[str]) -> RunRecord:
    """The run record one run of all the shards' items would give: its facts (the
    verdict, aggregates and gates come from :func:`plugins.verdict.decide`, with the
    shards' gates: :func:`record_gates`).

    Args:
        records: the shards' run records (any order).
        names: how to call each record in messages (its path).

    Raises:
        MergeError: not the shards 1..N of one split, a shard made with a selection that
            left items out, an item in two shards, or records that differ in model,
            generation settings, data or code version.
    """
    if not records:
        raise MergeError("no run records to merge")
    for record, name in zip(records, names, strict=True):
        if record.selection.deselected:
            raise MergeError(
                f"{name}: made with a selection (-k, -m, --deselect or --lf) that left out "
                "items; merge shards selected by --shard alone"
            )
    count = _shards(records, names)
    _check_same(records, names)
    items: dict[str, Any] = {}
    for record, name in zip(records, names, strict=True):
        for item in record.items:
            if item.id in items:
                raise MergeError(f"{name}: item {item.id} is in two shards")
            items[item.id] = item
    merged_items = [items[key] for key in sorted(items)]
    first = records[0]
    skipped: dict[str, str] = {}
    unloaded: dict[str, str] = {}
    for record in records:
        skipped.update(record.suites_skipped)
        unloaded.update(record.selection.unloaded)
    settings = {k: v for k, v in first.settings.items() if k != "shard"}
    settings["merged_shards"] = count
    if len({str(r.settings.get("ctrf_run_id")) for r in records}) > 1:
        settings.pop("ctrf_run_id", None)  # shards of several CI runs: none is the run's
    merged = RunRecord(
        schema_version=first.schema_version,
        run_id=new_run_id(),
        started_at=min(r.started_at for r in records),
        duration_s=max(r.duration_s for r in records),
        pytest_exit_status=max(r.pytest_exit_status for r in records),
        interrupted=next((r.interrupted for r in records if r.interrupted), None),
        stopped=next((r.stopped for r in records if r.stopped), None),
        usage_errors=[e for r in records for e in r.usage_errors],
        crashes=[c for r in records for c in r.crashes],
        other_failures=sorted({f for r in records for f in r.other_failures}),
        other_tests=[t for r in records for t in r.other_tests],
        suites_skipped=skipped,
        warnings=list(dict.fromkeys(w for r in records for w in r.warnings)),
        data=first.data,
        code=first.code,
        model=first.model,
        judge=first.judge,
        settings=settings,
        selection=Selection(
            suites=sorted({s for r in records for s in r.selection.suites}),
            skipped=skipped,
            unloaded=unloaded,
            narrow=all(r.selection.narrow for r in records),
            allow_subset=all(r.selection.allow_subset for r in records),
        ),  # fmt: skip
        suites=_suites(records),
        items=merged_items,
        counts=item_counts(merged_items, sum(r.counts.expected for r in records)),
        rescore_of=next(
            (r.rescore_of for r in records if r.rescore_of and not r.rescore_of.complete), None
        ),
        merged_from=[
            MergedShard(
                path=name,
                run_id=r.run_id,
                shard=r.settings.get("shard"),
                items=len(r.items),
                duration_s=r.duration_s,
            )
            for r, name in zip(records, names, strict=True)
        ],  # fmt: skip
        merged_at=time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
    )
    endpoints = endpoint_stats([{"calls": it.calls} for it in merged_items])
    if endpoints:
        merged.endpoints = endpoints
    if any(r.chat for r in records):  # the rule counts over every shard, each suite's example
        dumped = [it.model_dump(include={"id", "suite", "calls"}) for it in merged_items]
        merged.chat = chat_facts(dumped, [r.chat for r in records])
    return merged
