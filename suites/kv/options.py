"""The ``kv`` suite's options (``--suite-option kv.KEY=VALUE``, ``[tool.extractbench.options.kv]``):
the items file, the team's protocol (prompt template, system text, budget, whole documents,
metric per key and its settings) and the schema mode's (schema, prompt, bounds,
constraint)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from extractbench.suites import safe_json
from extractbench.suites.kv.metrics import METRICS, MetricName, MetricSettings
from extractbench.suites.suite_options import UserFileOptions

__all__ = ["KvOptions", "FDA_PROMPT", "SCHEMA_PROMPT", "DEFAULT_CONTEXT"]

FDA_PROMPT = "{chunk}\n{key}:"  # the FDA task's prompt (Arora et al. 2024; Evaporate)
SCHEMA_PROMPT = (
    "{document}\n\nThe fields of the document above as one JSON object with the keys {fields}:\n"
)
DEFAULT_CONTEXT = 32768  # the packaged Gemma 3 270M's training context, in tokens


class KvOptions(UserFileOptions):
    """``--suite-option kv.KEY=VALUE``."""

    # the options that decide what a score means: a baseline run with other values of
    # them measured something else (plugins.verdict.baseline refuses it)
    protocol_fields: ClassVar[tuple[str, ...]] = (
        "prompt", "system", "max_tokens", "whole_document", "metric", "metrics",
        "fuzzy_threshold", "number_abs_tol", "number_rel_tol", "decimal_separator",
        "date_dayfirst", "schema", "schema_prompt", "schema_max_string", "schema_max_tokens",
        "constrain",
    )  # fmt: skip

    path: Path | None = Field(
        default=None,
        description=(
            'the JSON Lines file of items, one {"document": PATH or text, "key": ..., '
            '"value": ... or [...]} per line (with kv.schema: {"document": ..., '
            '"expected": {...}}) (a relative path is read from the folder pytest runs in; a '
            "document path from the file's own folder); required"
        ),
    )
    prompt: str = Field(
        default=FDA_PROMPT,
        description=(
            "the prompt template: {chunk} (or {document}) is the chunk or the whole document, "
            "{key} the key; default: the FDA paper's prompt"
        ),
    )
    system: str = Field(
        default="",
        description=(
            "a system text: a chat model gets it as the system message and the prompt as the "
            "user message; a completion model reads it, a blank line, then the prompt"
        ),
    )
    max_tokens: int = Field(default=48, ge=1, description="tokens generated per key (the FDA budget)")
    whole_document: bool = Field(
        default=False,
        description=(
            "prompt with the whole document instead of its 1,920-token chunk; a document "
            "whose prompt and budget exceed kv.context_tokens is refused"
        ),
    )
    context_tokens: int = Field(
        default=DEFAULT_CONTEXT,
        ge=64,
        description=(
            "the model's context window in tokens (packaged Gemma 3 tokenizer) a whole-"
            "document or schema prompt must fit with its budget"
        ),
    )
    metric: MetricName = Field(
        default="contains",
        description=(
            "how an answer is scored against the accepted values: contains (FDA), exact, "
            "normalized, fuzzy, number or date (docs/suites/kv.md)"
        ),
    )
    metrics: dict[str, MetricName] = Field(
        default_factory=dict,
        description=(
            'the metric per key or schema field, over kv.metric: {"total": "number", ...} '
            "(a JSON object on the command line)"
        ),
    )
    fuzzy_threshold: float = Field(
        default=90.0, ge=0, le=100, description="fuzzy: the least rapidfuzz ratio (0-100) that matches"
    )
    number_abs_tol: float = Field(
        default=0.0, ge=0, description="number: the largest absolute difference that matches"
    )
    number_rel_tol: float = Field(
        default=0.0, ge=0, description="number: the largest difference relative to the expected value"
    )
    decimal_separator: Literal[".", ",", "auto"] = Field(
        default=".",
        description=(
            "number: the decimal separator, . or , (the others group thousands), or auto "
            "(each number's own: the last of . and , when both occur, a single one not "
            "followed by three digits)"
        ),
    )
    date_dayfirst: bool = Field(
        default=False, description="date: read 03/04/2025 as 3 April (else as March 4)"
    )
    schema_file: Path | None = Field(
        default=None,
        alias="schema",
        description=(
            "a JSON Schema of one object: schema mode, each line of kv.path one document and "
            "its expected object, the model asked for the whole object"
        ),
    )
    schema_prompt: str = Field(
        default=SCHEMA_PROMPT,
        description=(
            "schema mode's prompt template: {document}, {fields} (the keys, comma-separated) "
            "and {schema} (the JSON Schema as JSON)"
        ),
    )
    schema_max_string: int = Field(
        default=64,
        ge=1,
        description="schema mode: the maxLength given to a string field that has none",
    )
    schema_max_tokens: int | None = Field(
        default=None,
        ge=1,
        description="schema mode: tokens generated per document; unset: from the schema",
    )
    constrain: bool = Field(
        default=True,
        description=(
            "schema mode: decode under the schema's grammar where the backend honours one "
            "(llama.cpp in process, llama-server)"
        ),
    )

    @field_validator("metrics", mode="before")
    @classmethod
    def _metrics_from_json(cls, value: Any) -> Any:
        """A ``--suite-option kv.metrics=...`` value is the JSON object's text."""
        if isinstance(value, str):
            try:
                value = safe_json.loads(value) if value.strip() else {}
            except json.JSONDecodeError:
                raise ValueError('must be a JSON object: {"KEY": "METRIC", ...}') from None
        if isinstance(value, dict):
            for key, metric in value.items():
                if metric not in METRICS:
                    raise ValueError(
                        f"{key!r}: {metric!r} is no metric; one of {', '.join(METRICS)}"
                    )
        return value

    @model_validator(mode="after")
    def _templates_name_their_parts(self) -> KvOptions:
        if "{key}" not in self.prompt or not (
            "{chunk}" in self.prompt or "{document}" in self.prompt
        ):
            raise ValueError(
                f"kv.prompt={self.prompt!r}: must hold {{key}} and {{chunk}} or {{document}}"
            )
        if "{document}" not in self.schema_prompt:
            raise ValueError(f"kv.schema_prompt={self.schema_prompt!r}: must hold {{document}}")
        return self

    def protocol(self) -> dict[str, Any]:
        """The options that decide what a score means (:attr:`protocol_fields`), option
        name -> JSON-safe value: what the record's notes name and a baseline must share."""
        dumped = self.model_dump(mode="json", by_alias=True)
        return {name: dumped[name] for name in self.protocol_fields}

    def metric_for(self, key: str) -> str:
        """The metric that scores ``key``: ``kv.metrics[key]``, else ``kv.metric``."""
        return self.metrics.get(key, self.metric)

    def metric_settings(self) -> MetricSettings:
        """The settings of the metrics that take one."""
        return MetricSettings(
            fuzzy_threshold=self.fuzzy_threshold, number_abs_tol=self.number_abs_tol,
            number_rel_tol=self.number_rel_tol, decimal_separator=self.decimal_separator,
            date_dayfirst=self.date_dayfirst,
        )  # fmt: skip
