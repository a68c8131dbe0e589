"""The run record in the Every Eval Ever schema (version 0.3.0), for ``--export
every-eval-ever=DIR``.

Every Eval Ever (EvalEval Coalition, ``evaleval/every_eval_ever``; the PyPI package
``every-eval-ever`` ships the schema files ``eval.schema.json`` and
``instance_level_eval.schema.json``) stores one *evaluation* per benchmark and model: an
aggregate JSON file and its instance-level JSONL companion, laid out as its datastore
wants them::

    DIR/data/<benchmark>/<developer>/<model>/<uuid4>.json
    DIR/data/<benchmark>/<developer>/<model>/<uuid4>_samples.jsonl

Here one evaluation per suite of the record: benchmark ``extractbench_<suite>``, one
``evaluation_results`` entry per ``suite/metric`` aggregate (mean, the run's 95% CI and
its method), and one instance row per (item, metric) with a score (the schema asks for
one row per aggregate result a sample contributes to). The UUIDs are derived from the
record's run id and the suite, so writing the same record twice gives the same files.

What the schema asks and the run record does not hold, and how it is filled:

- ``input.raw``: the record keeps no prompt text, only its SHA-256; ``raw`` is
  ``sha256:<hex>`` (the item id and the data manifest rebuild the prompt).
- ``is_correct``: for a binary metric (Wilson interval) the score equals the best value of
  its range; for a continuous one the same test (a perfect score).
- ``lower_is_better``: True for the metrics named in :data:`LOWER_IS_BETTER` (error
  counts and rates), False otherwise.
- ``model_info.id``: the served model name for a server that gives one in the Hugging Face
  form (``org/name``), else ``local/<file or folder name>``; the file's SHA-256 and the
  backend are in ``additional_details``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import uuid
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from extractbench.fixtures.models.registry import BackendKind, installed_backends
from extractbench.plugins.outputs.eee_samples import (
    EEE_SCHEMA_VERSION,
    LOWER_IS_BETTER,
    instance_rows,
    lower_is_better,
    score_range,
    strings,
)
from extractbench.plugins.record import Aggregate, RunRecord
from extractbench.plugins.verdict.sequential_gates import ALPHA, ANYTIME
from extractbench.plugins.verdict.stats import BOOTSTRAP_RESAMPLES, is_binary
from extractbench.suites.model_files import ModelFileError
from extractbench.suites.registry import Registry

__all__ = ["EEE_SCHEMA_VERSION", "LOWER_IS_BETTER", "eee_files", "model_id"]

_UNSAFE = re.compile(r'[<>:"/\\|?*\x00-\x1f]')


def _component(text: str) -> str:
    """One portable datastore path component (the schema's validator refuses ``/``,
    ``:`` and other characters Windows cannot hold)."""
    safe = _UNSAFE.sub("_", text).strip(" .") or "unnamed"
    return "_data" if safe == "data" else safe


def model_id(record: RunRecord) -> str:
    """``org/name`` of the model (see the module docstring)."""
    name = str(record.model.get("name") or record.model.get("backend") or "model")
    if re.fullmatch(r"[\w.-]+/[\w.:-]+", name):
        return name
    stem = PurePosixPath(name.replace("\\", "/")).name.removesuffix(".gguf")
    return f"local/{_component(stem)}"


def _uuid4(*parts: str) -> str:
    """A UUID (version 4 bits, RFC 4122 variant) derived from ``parts``."""
    digest = hashlib.sha256("\0".join(parts).encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _epoch(record: RunRecord) -> str:
    """The run's end as Unix epoch seconds (text), as the schema's examples give it."""
    try:
        start = datetime.fromisoformat(record.started_at).timestamp()
    except ValueError:
        return "0"
    return f"{start + record.duration_s:.3f}"


def _bound(value: float) -> float | str:
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def _kind(backend: str) -> BackendKind | None:
    """The registered backend of a record's ``model.backend``; None where it is not
    installed here or the entry points do not load (an export never fails on them)."""
    try:
        return installed_backends().get(backend)
    except ModelFileError:
        return None


def _model_info(record: RunRecord, ident: str) -> dict[str, Any]:
    model = record.model
    backend = str(model.get("backend", ""))
    kind = _kind(backend)  # None: --serve's, or a backend not installed here
    versions = model.get("versions") or {}
    details = {
        "deployment_type": "self_deployed" if kind is not None and kind.in_process else "unknown",
        "model_availability": "open_weights" if model.get("sha256") else "unknown",
        **strings({k: model.get(k) for k in ("backend", "sha256", "fingerprint", "path")}),
    }
    info: dict[str, Any] = {
        "name": str(model.get("name") or ident),
        "id": ident,
        "developer": ident.split("/", 1)[0],
        "additional_details": details,
    }
    if backend:
        info["inference_engine"] = {
            "name": kind.engine if kind is not None and kind.engine else backend
        }
        version = next(iter(versions.values()), None) if len(versions) == 1 else None
        if version:
            info["inference_engine"]["version"] = str(version)
    return info


def _result(
    record: RunRecord, registry: Registry, suite: str, key: str, agg: Aggregate, timestamp: str
) -> dict[str, Any]:
    metric = key.split("/", 1)[1]
    low, high = score_range(registry, suite, metric)
    # a 0/1 metric, as the aggregate decides it (its Wilson interval): read from the scores,
    # since a stopped suite's interval method is the sequence's whatever the scores
    binary = is_binary(
        [
            value
            for it in record.items
            if it.suite == suite and it.outcome == "passed"
            if (value := it.scores.get(metric)) is not None
        ]
    )
    config: dict[str, Any] = {
        "evaluation_description": f"extractbench {key}: mean over the run's items",
        "metric_id": f"extractbench.{suite}.{metric}",
        "metric_name": metric,
        "lower_is_better": lower_is_better(metric),
        "score_type": "binary" if binary else "continuous",
    }
    if not binary:
        config["min_score"], config["max_score"] = _bound(low), _bound(high)
    uncertainty: dict[str, Any] = {
        "confidence_interval": {
            "lower": agg.ci_low,
            "upper": agg.ci_high,
            # after an early stop: the anytime-valid bounds, two-sided 1 - 2 alpha
            "confidence_level": 1 - 2 * ALPHA if agg.stopped_early else 0.95,
            "method": agg.ci_method,
        },
        "num_samples": agg.n,
    }
    if agg.stopped_early and agg.ci_method != ANYTIME:
        del uncertainty["confidence_interval"]  # a stopped suite's metric without bounds
    if agg.ci_method in ("bootstrap", "cluster_bootstrap"):
        uncertainty["num_bootstrap_samples"] = BOOTSTRAP_RESAMPLES
    data = (record.data or {}).get("suites", {}).get(suite, {})
    source = {
        "dataset_name": f"extractbench_{suite}",
        "source_type": "other",
        "additional_details": strings(
            {
                "manifest_version": (record.data or {}).get("manifest_version"),
                "data_sha256": data.get("sha256"),
                "licenses": data.get("licenses"),
            }
        ),
    }
    return {
        "evaluation_result_id": key,
        "evaluation_name": key,
        "source_data": source,
        "evaluation_timestamp": timestamp,
        "metric_config": config,
        "score_details": {"score": agg.mean, "uncertainty": uncertainty},
    }


def eee_files(record: RunRecord, registry: Registry) -> dict[str, str]:
    """The Every Eval Ever files of a decided record: relative path -> text.

    Args:
        record: a decided run record (its aggregates set by ``plugins.verdict.decide``).
        registry: the suites (the declared score range of each metric).

    Returns:
        For each suite with an aggregate, ``data/extractbench_<suite>/<developer>/
        <model>/<uuid>.json`` and, when it has scored items, its ``_samples.jsonl``.
    """
    ident = model_id(record)
    developer, model = ident.split("/", 1)
    timestamp = _epoch(record)
    files: dict[str, str] = {}
    for suite in sorted({key.split("/", 1)[0] for key in record.aggregates}):
        benchmark = f"extractbench_{suite}"
        folder = PurePosixPath("data", benchmark, _component(developer), _component(model))
        file_uuid = _uuid4(record.run_id, suite)
        evaluation_id = f"{benchmark}/{ident}/{timestamp}"
        results = [
            _result(record, registry, suite, key, agg, timestamp)
            for key, agg in sorted(record.aggregates.items())
            if key.split("/", 1)[0] == suite
        ]
        rows = [
            row
            for item in record.items
            if item.suite == suite and item.outcome == "passed"
            for row in instance_rows(record, registry, suite, item, evaluation_id, ident)
        ]
        aggregate: dict[str, Any] = {
            "schema_version": EEE_SCHEMA_VERSION,
            "evaluation_id": evaluation_id,
            "evaluation_timestamp": timestamp,
            "retrieved_timestamp": timestamp,
            "source_metadata": {
                "source_name": "extractbench",
                "source_type": "evaluation_run",
                "source_organization_name": "extractbench",
                "evaluator_relationship": "third_party",
                "additional_details": strings(
                    {
                        "run_id": record.run_id,
                        "verdict": record.verdict.word if record.verdict else None,
                        "exit_status": record.exit_status,
                        "complete": record.complete,
                        "shard": record.selection.shard,
                    }
                ),
            },
            "model_info": _model_info(record, ident),
            "eval_library": {
                "name": "extractbench",
                "version": str(record.code.get("extractbench", "unknown")),
                "additional_details": strings({"source_sha256": record.code.get("source_sha256")}),
            },
            "evaluation_results": results,
        }
        if rows:
            text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
            samples = str(folder / f"{file_uuid}_samples.jsonl")
            aggregate["detailed_evaluation_results"] = {
                "format": "jsonl",
                "file_path": samples,
                "hash_algorithm": "sha256",
                "checksum": hashlib.sha256(text.encode()).hexdigest(),
                "total_rows": len(rows),
            }
            files[samples] = text
        files[str(folder / f"{file_uuid}.json")] = json.dumps(aggregate, indent=1) + "\n"
    return files
