"""What one item records while its test runs: scores, the generation, errors."""

from __future__ import annotations

import math
import re
from typing import Any

from fixtures.models.base import Backend, Generation
from suites.item import Item
from suites.protocol import ItemResult, generate

__all__ = ["ItemRecorder"]

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

    def __init__(self, item: Item, user_properties: list[tuple[str, object]]) -> None:
        self.item = item
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
            ValueError: bad metric name, non-finite value, or the metric recorded twice.
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
            "prediction": self.prediction,
            "reference": self.item.reference,
            "scores": dict(self.scores),
            "tokens": dict(self.tokens),
            "latency_s": self.latency_s,
            "meta": dict(self.item.meta),
            "details": dict(self.details),
            "calls": list(self.calls),
        }
