"""The run record as a CTRF report (Common Test Report Format, ``ctrf-io``), for ``--ctrf
PATH``.

CTRF is a JSON test report that CI tools read (GitHub's ``github-test-reporter``, GitLab,
Jenkins and Slack plugins). The document follows the JSON Schema the reference
implementation ships (npm ``ctrf`` 0.3.0, ``ctrf-schema-0.0.json``, spec version
:data:`CTRF_SPEC_VERSION`): one test per item (its scores as ``labels``, its prediction and
reference in ``extra``), one per other test, one per decided gate and regression check
(the cases JUnit writes, :func:`plugins.outputs.junit.verdict_cases`), the verdict and the
aggregates in ``results.extra``.

``runId`` names the logical run, shared by the shards of one run (CTRF: "Shared across
shards/documents belonging to the same run"): ``--ctrf-run-id`` when given, else the one
the record keeps (``settings.ctrf_run_id``), else the CI's own run (:func:`ci_run_id`),
else the record's run id. ``reportId`` is derived from the record's run id, so the same
record gives the same document.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from extractbench.plugins.outputs.early_stop_report import not_run_items
from extractbench.plugins.outputs.junit import verdict_cases
from extractbench.plugins.record import ItemEntry, RunRecord

__all__ = ["CTRF_SPEC_VERSION", "ci_run_id", "ctrf_json", "ctrf_run_id"]

CTRF_SPEC_VERSION = "0.0.0"  # npm ctrf 0.3.0: CURRENT_SPEC_VERSION, ctrf-schema-0.0.json


def ci_run_id(environ: Mapping[str, str] | None = None) -> str | None:
    """The CI's identifier of the pipeline this process runs in, the same in every job of
    it (so in every shard and in the merge job), or None outside CI: GitHub Actions
    ``GITHUB_RUN_ID`` (a re-run attempt keeps it), GitLab ``CI_PIPELINE_ID``, Jenkins
    ``BUILD_TAG``."""
    env = os.environ if environ is None else environ
    if env.get("GITHUB_RUN_ID"):
        return f"github:{env.get('GITHUB_REPOSITORY', '')}:{env['GITHUB_RUN_ID']}"
    if env.get("CI_PIPELINE_ID"):
        return f"gitlab:{env.get('CI_PROJECT_PATH', '')}:{env['CI_PIPELINE_ID']}"
    if env.get("BUILD_TAG"):
        return f"jenkins:{env['BUILD_TAG']}"
    return None


def ctrf_run_id(record: RunRecord, explicit: str | None = None, ci: str | None = None) -> str:
    """The ``runId`` of ``record``'s CTRF document (see the module docstring)."""
    kept = record.settings.get("ctrf_run_id")
    return explicit or (kept if isinstance(kept, str) and kept else None) or ci or record.run_id


def _ms(seconds: float | None) -> int:
    return max(0, int(round((seconds or 0.0) * 1000)))


def _start_ms(record: RunRecord) -> int:
    try:
        return int(datetime.fromisoformat(record.started_at).timestamp() * 1000)
    except ValueError:
        return 0


def _labels(item: ItemEntry) -> dict[str, Any]:
    labels: dict[str, Any] = {"group": item.group} if item.group else {}
    for metric, value in item.scores.items():
        if value is not None and math.isfinite(value):
            labels[f"{item.suite}/{metric}"] = value
    return labels


def _item_test(item: ItemEntry) -> dict[str, Any]:
    test: dict[str, Any] = {
        "name": item.id,
        "testId": item.id,
        "status": item.outcome,
        "duration": _ms(item.latency_s),
        "suite": [item.suite, *([item.group] if item.group else [])],
        "type": "benchmark item",
        "labels": _labels(item),
        "extra": {
            "prediction": item.prediction,
            "reference": item.reference,
            "tokens": item.tokens,
            "calls": len(item.calls),
        },
    }
    if item.test:
        test["filePath"] = item.test.split("::", 1)[0]
    if item.error:
        test["message"] = item.error
    return test


def ctrf_json(record: RunRecord, explicit_run_id: str | None = None, ci: str | None = None) -> str:
    """The CTRF document of a decided run record (JSON text).

    Args:
        record: a decided record (verdict, gates and aggregates set).
        explicit_run_id: ``--ctrf-run-id``.
        ci: the CI's run (:func:`ci_run_id`), used when neither the option nor the record
            names the run.
    """
    tests = [_item_test(it) for it in record.items]
    for other in record.other_tests:
        test = {
            "name": other.nodeid,
            "testId": other.nodeid,
            "status": other.outcome,
            "duration": _ms(other.duration_s),
            "filePath": other.nodeid.split("::", 1)[0],
        }
        if other.error:
            test["message"] = other.error
        tests.append(test)
    tests += [
        {"name": gone.nodeid, "testId": gone.nodeid, "status": "skipped", "duration": 0,
         "filePath": gone.nodeid.split("::", 1)[0], "message": gone.message}
        for gone in not_run_items(record)
    ]  # fmt: skip
    for case in verdict_cases(record):
        test = {
            "name": f"{case.classname}::{case.name}",
            "testId": f"{case.classname}::{case.name}",
            "status": case.outcome,
            "duration": 0,
            "suite": [case.classname],
            "type": case.classname,
            "labels": {
                k: v
                for k, v in case.properties
                if isinstance(v, str | int | float) and not isinstance(v, bool) and v != ""
            },
        }
        if not case.passed:
            test["message"] = case.message
        tests.append(test)
    start = _start_ms(record)
    count = {s: sum(t["status"] == s for t in tests) for s in ("passed", "failed", "skipped")}
    verdict = record.verdict
    environment: dict[str, Any] = {
        "reportName": "extractbench",
        "appName": str(record.model.get("name", "")),
        "appVersion": str(record.model.get("sha256") or record.model.get("fingerprint", "")),
        "healthy": record.exit_status == 0,
    }
    if record.selection.shard:
        environment["shardId"] = record.selection.shard
    document = {
        "reportFormat": "CTRF",
        "specVersion": CTRF_SPEC_VERSION,
        "reportId": str(
            uuid.UUID(bytes=hashlib.sha256(record.run_id.encode()).digest()[:16], version=4)
        ),
        "runId": ctrf_run_id(record, explicit_run_id, ci),
        "timestamp": datetime.fromtimestamp(start / 1000 + record.duration_s, UTC).isoformat(),
        "generatedBy": f"extractbench {record.code.get('extractbench', '')}".strip(),
        "results": {
            "tool": {"name": "extractbench", "version": str(record.code.get("extractbench", ""))},
            "summary": {
                "tests": len(tests),
                **count,
                "pending": 0,
                "other": 0,
                "suites": len(record.suites),
                "start": start,
                "stop": start + _ms(record.duration_s),
                "duration": _ms(record.duration_s),
            },
            "tests": tests,
            "environment": environment,
            "extra": {
                "run_id": record.run_id,
                "verdict": verdict.word if verdict else None,
                "exit_status": record.exit_status,
                "reasons": verdict.reasons if verdict else [],
                "complete": record.complete,
                "aggregates": {
                    k: {"mean": a.mean, "ci_low": a.ci_low, "ci_high": a.ci_high, "n": a.n}
                    for k, a in record.aggregates.items()
                },
                "merged_from": [s.run_id for s in record.merged_from or []],
            },
        },
    }
    return json.dumps(document, indent=1, ensure_ascii=False, default=str) + "\n"
