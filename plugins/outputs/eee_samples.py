"""The instance-level rows of the Every Eval Ever export (``instance_level_eval.schema.json``,
version 0.3.0): one row per (item, metric with a score); see :mod:`plugins.outputs.eee`."""

from __future__ import annotations

import fnmatch
import hashlib
import json
import math
from typing import Any

from extractbench.plugins.record import ItemEntry, RunRecord
from extractbench.suites.registry import Registry

__all__ = [
    "EEE_SCHEMA_VERSION", "LOWER_IS_BETTER", "instance_rows", "lower_is_better", "score_range",
    "strings",
]  # fmt: skip

EEE_SCHEMA_VERSION = "0.3.0"

# Metrics (fnmatch patterns, without the suite prefix) where a lower value is better.
LOWER_IS_BETTER = (
    "error_*",
    "*/error_*",
    "parse_error",
    "*/parse_error",
    "parse_failures",
    "pscore_parse_failures",
    "llm_false_positive",
    "incompleteness",
    "relevance_spread",
)


def strings(mapping: dict[str, Any]) -> dict[str, str]:
    """A string-valued map (the schema's ``additional_details``)."""
    out = {}
    for key, value in mapping.items():
        if value is None:
            continue
        out[str(key)] = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return out


def lower_is_better(metric: str) -> bool:
    """Whether a lower value of ``metric`` (no suite prefix) is better (:data:`LOWER_IS_BETTER`)."""
    return any(fnmatch.fnmatchcase(metric, p) for p in LOWER_IS_BETTER)


def score_range(registry: Registry, suite: str, metric: str) -> tuple[float, float]:
    """The declared range of ``suite/metric`` (``Suite.score_range``; [0, 1] if unknown)."""
    known = registry.suites.get(suite)
    return known.score_range(metric) if known is not None else (0.0, 1.0)


def _references(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    return [] if value is None else [json.dumps(value, sort_keys=True, ensure_ascii=False)]


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return "" if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


def instance_rows(
    record: RunRecord,
    registry: Registry,
    suite: str,
    item: ItemEntry,
    evaluation_id: str,
    ident: str,
) -> list[dict[str, Any]]:
    raw = f"sha256:{item.prompt_sha256}"
    references = _references(item.reference)
    responses = [_text(c.get("text")) for c in item.calls] or [_text(item.prediction)]
    prompt = sum(int(c.get("prompt_tokens", 0)) for c in item.calls)
    completion = sum(int(c.get("completion_tokens", 0)) for c in item.calls)
    if not item.calls:
        prompt, completion = item.tokens.get("prompt", 0), item.tokens.get("completion", 0)
    common: dict[str, Any] = {
        "schema_version": EEE_SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": ident,
        "sample_id": item.id,
        "sample_hash": hashlib.sha256((raw + json.dumps(references)).encode()).hexdigest(),
        "interaction_type": "single_turn",
        "input": {"raw": raw, "reference": references},
        "output": {"raw": responses},
        "answer_attribution": [
            {
                "turn_idx": 0,
                "source": "output.raw",
                "extracted_value": _text(item.prediction),
                "extraction_method": f"extractbench:{suite}",
                "is_terminal": True,
            }
        ],
        "token_usage": {
            "input_tokens": prompt,
            "output_tokens": completion,
            "total_tokens": prompt + completion,
        },
        "performance": {"latency_ms": max(0.0, (item.latency_s or 0.0) * 1000)},
        "error": item.error,
        "metadata": strings({"group": item.group, "outcome": item.outcome, **item.meta}),
    }
    rows = []
    for metric, value in item.scores.items():
        if value is None or not math.isfinite(value):
            continue
        low, high = score_range(registry, suite, metric)
        best = low if lower_is_better(metric) else high
        rows.append(
            {
                **common,
                "evaluation_name": f"{suite}/{metric}",
                "evaluation_result_id": f"{suite}/{metric}",
                "evaluation": {
                    "score": value,
                    "is_correct": value == best,
                    "num_turns": max(1, len(item.calls)),
                },
            }
        )
    return rows
