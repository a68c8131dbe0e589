"""What one item records while its test runs: scores, the generation, errors."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import pytest

from extractbench.fixtures.models.redact import redact_text
from extractbench.fixtures.worker_channel import ReportField
from extractbench.suites.item import Item
from extractbench.suites.model import Backend, Generation, RunStopper
from extractbench.suites.protocol import ItemResult, generate

PROMPT_TAIL = 400  # characters of each prompt's end the record keeps (the per-item view)

__all__ = [
    "ItemRecorder", "json_safe", "report_entry", "redact_report", "error_line", "item_id_of",
    "ITEM_ENTRY",
]  # fmt: skip

# an item's report carries its entry (report_entry) to the controller
ITEM_ENTRY = ReportField[dict[str, Any]]("extractbench_item")

_METRIC_RE = re.compile(r"^[A-Za-z0-9_.\-]+(/[A-Za-z0-9_.\-]+)*$")


def json_safe(value: Any) -> tuple[Any, bool]:
    """``(value as JSON can hold it, whether anything changed)``: NaN and infinities
    become None, sets sorted lists, tuples lists, mapping keys strings, and any other
    object its ``repr``; JSON values are returned as they are."""
    if value is None or isinstance(value, bool | int | str):
        return value, False
    if isinstance(value, float):
        return (value, False) if math.isfinite(value) else (None, True)
    if isinstance(value, dict):
        pairs = [(str(k), *json_safe(v)) for k, v in value.items()]
        changed = any(c for _, _, c in pairs) or any(not isinstance(k, str) for k in value)
        return {k: v for k, v, _ in pairs}, changed
    if isinstance(value, list | tuple | set | frozenset):
        items = [json_safe(v) for v in value]
        out = [v for v, _ in items]
        if isinstance(value, set | frozenset):
            out.sort(key=repr)
        return out, any(c for _, c in items) or not isinstance(value, list)
    return repr(value), True


class ItemRecorder:
    """Collects one item's scores and generation; the ``score`` fixture is one of these.

    ``score("accuracy", 1.0)`` records a metric; ``score.generate(model)`` runs the item
    through the model and records the output (``score.record_generation(gen)`` records an
    output obtained otherwise). Scores also go to ``user_properties`` (as ``suite/metric``) so JUnit
    shows them as test-case properties.
    """

    def __init__(
        self,
        item: Item,
        user_properties: list[tuple[str, object]],
        score_range: Callable[[str], tuple[float, float]] | None = None,
    ) -> None:
        self.item = item
        self._range = score_range
        self.scores: dict[str, float | None] = {}
        self.prediction: str | None = None
        self.tokens: dict[str, int] = {}
        self.latency_s: float | None = None
        self.details: dict[str, Any] = {}
        self.calls: list[dict[str, Any]] = []  # every model call, filled by the backend
        self._properties = user_properties

    def __call__(self, metric: str, value: float | None) -> None:
        """Record ``metric`` for this item.

        Args:
            metric: name without the suite prefix (``accuracy``, ``html/h_content``).
            value: a finite float (0-1 unless the metric's docs say otherwise), or None
                for "not computed" (counted, kept out of the mean).

        Raises:
            ValueError: bad metric name, non-finite value, a value outside the metric's
                declared range (``Suite.ranges``; [0, 1] by default), or the metric
                recorded twice.
        """
        if not _METRIC_RE.match(metric):
            raise ValueError(f"score: metric name {metric!r} must be letters, digits, _ . - and /")
        if metric in self.scores:
            raise ValueError(f"score: metric {metric!r} recorded twice for {self.item.id}")
        if value is not None:
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(
                    f"score: {metric} = {value} is not a finite number ({self.item.id})"
                )
            low, high = self._range(metric) if self._range is not None else (-math.inf, math.inf)
            if not low <= value <= high:
                raise ValueError(
                    f"score: {self.item.suite}/{metric} = {value:g} is outside its declared "
                    f"range [{low:g}, {high:g}] ({self.item.id}): a metric bug, not a score"
                )
        self.scores[metric] = value
        self._properties.append((f"{self.item.suite}/{metric}", "" if value is None else value))

    def generate(self, model: Backend) -> Generation:
        """Run the item's prompt through ``model`` with the item's budget and stop
        sequences, record the generation, and return it.

        Raises:
            ModelError: from the backend (the item then fails as an error).
        """
        generation = generate(self.item, model)
        self.record_generation(generation)
        return generation

    def record_generation(self, generation: Generation) -> None:
        """Record the model's output for the run record (prediction, tokens, latency)."""
        self.prediction = generation.text
        self.tokens = {
            "prompt": generation.prompt_tokens,
            "completion": generation.completion_tokens,
        }
        self.latency_s = generation.latency_s
        self._properties.append(("prediction", generation.text))

    def record(self, result: ItemResult) -> None:
        """Record what a suite's ``run`` returned: its generation, scores and details."""
        if result.generation is not None:
            self.record_generation(result.generation)
        for metric, value in result.scores.items():
            self(metric, value)
        for key, value in result.details.items():
            self.detail(key, value)

    def detail(self, key: str, value: Any) -> None:
        """Record a fact about the item (error counts, a parse error) for the run record;
        not a score, not aggregated. A value JSON cannot hold is made safe here, once
        (:func:`json_safe`), and its key listed in ``details["sanitised"]``, so that no
        value can lose the record."""
        safe, changed = json_safe(value)
        self.details[key] = safe
        if changed:
            self.details.setdefault("sanitised", []).append(key)

    def to_dict(self) -> dict[str, Any]:
        """The item's entry in the run record (JSON-safe)."""
        return {
            "id": self.item.id,
            "suite": self.item.suite,
            "group": self.item.group,
            "prompt_sha256": self.item.prompt_sha256,
            "prompt_tail": self.item.prompt[-PROMPT_TAIL:],
            "prompt_chars": self.item.prompt_chars,
            "prediction": self.prediction,
            "reference": self.item.reference,
            "scores": dict(self.scores),
            "tokens": dict(self.tokens),
            "latency_s": self.latency_s,
            "meta": dict(self.item.meta),
            "details": dict(self.details),
            "calls": list(self.calls),
        }


def item_id_of(nodeid: str) -> str:
    """``suites/fda/test_fda.py::test_fda[fda/K1/c0/key]@group`` -> ``fda/K1/c0/key``."""
    head = nodeid.rsplit("@", 1)[0] if nodeid.rfind("@") > nodeid.rfind("]") else nodeid
    return head[head.find("[") + 1 : -1] if head.endswith("]") and "[" in head else head


def error_line(report: pytest.TestReport) -> str:
    """``file:line: ExcType: message`` (the message's first lines) of a failed report,
    redacted before it is cut (no part of a secret is kept)."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        message = "\n".join(str(crash.message).strip().splitlines()[:3])
        return redact_text(f"{crash.path}:{crash.lineno}: {message}")[:1000]
    return redact_text("\n".join(str(report.longrepr or "").strip().splitlines()[-3:]))[:1000]


def redact_report(report: pytest.TestReport) -> None:
    """A failed report whose text holds a secret of the run (or a URL's credentials) gets
    that text redacted (:func:`fixtures.models.redact.redact_text`) in its place: pytest
    prints it to the terminal and sends it to the controller."""
    if report.failed and report.longrepr is not None:
        text = str(report.longrepr)
        clean = redact_text(text)
        if clean != text:
            report.longrepr = clean


def report_entry(
    item: Item, recorder: ItemRecorder | None, report: pytest.TestReport,
    call: pytest.CallInfo[None],
) -> dict[str, Any] | None:  # fmt: skip
    """The run-record entry an item's test report carries to the controller: its
    recorder's content after the call, or a bare failed entry when setup or teardown
    failed (None for the phases that record nothing). A test that passed without
    recording a score fails here: an item that measured nothing never passes."""
    if report.when == "call" and recorder is not None:
        if report.passed and not recorder.scores:
            report.outcome = "failed"
            report.longrepr = f"{item.id}: the test recorded no score"
        entry = recorder.to_dict()
    elif report.failed:
        entry = ItemRecorder(item, []).to_dict()
    else:
        return None
    entry["outcome"] = report.outcome
    entry["test"] = report.nodeid  # its JUnit name
    if report.failed:
        entry["error"] = error_line(report)
        stopper = call.excinfo.value if call.excinfo is not None else None
        if isinstance(stopper, RunStopper):
            entry["stop"] = {"kind": stopper.kind, "message": str(stopper)}
    return entry
