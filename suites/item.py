"""The benchmark item: what every suite builds from its data and the plugin parametrizes."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from extractbench.suites.answers import engine_stops
from extractbench.suites.model import Request

__all__ = ["Item", "LazyText", "SuiteData", "DataError", "DataMissing"]


class DataError(Exception):
    """A data file is malformed or missing something a suite needs.

    The message names the file (and line, where there is one) and what is wrong.
    """


class DataMissing(DataError):
    """A suite's data files are absent; the suite is skipped with this message."""


@dataclass(frozen=True, eq=False)
class LazyText:
    """Text built when it is read, of a length known in advance.

    For prompts too many and too large to hold at collection (Table QA's synthetic subsets:
    9,600 tables per subset, one per question): ``str()`` calls ``build``, ``len()`` is
    ``length`` without building. ``build`` should check that it rebuilt the text the items
    were made from (Table QA compares a SHA-256); ``str()`` checks the length.

    Attributes:
        build: returns the text (deterministic; may be cached by the caller).
        length: its length in characters.
        what: names the text in the error raised when ``build`` disagrees with ``length``.
    """

    build: Callable[[], str]
    length: int
    what: str = "text"

    def __str__(self) -> str:
        """The text.

        Raises:
            DataError: the rebuilt text has another length than recorded.
        """
        text = self.build()
        if len(text) != self.length:
            raise DataError(
                f"{self.what}: rebuilt with {len(text)} characters, {self.length} when its items "
                "were built (a changed generator or library version; clear the derived cache)"
            )
        return text

    def __len__(self) -> int:
        return self.length


@dataclass(frozen=True)
class Item:
    """One benchmark item.

    Attributes:
        id: stable identifier, ``"<suite>/..."`` (e.g. ``fda/K153137/c2/applicant``);
            identical on every xdist worker and every run.
        group: unit that shares a prompt prefix (FDA: one document chunk). Items of one
            group run consecutively on one worker so the backend reuses the prefix.
        prefix: the part of the prompt shared by the items of the group (one string
            object, shared in memory too), or a :class:`LazyText` built when read.
        suffix: the item's own end of the prompt; ``prompt = prefix + suffix``.
        reference: the gold answer the metric compares against.
        meta: JSON-safe attributes (breakdown keys such as ``key``, ``doc_id``).
        max_tokens: generation budget in the model's tokens.
        stop: stop sequences (excluded from the generation).
        system: the paper's system-role text (Table QA's system prompt, Struc-Bench's
            instruction), which is also the beginning of the prompt: a completion model
            reads it there, a chat model gets it as the system message and the rest of
            the prompt as the user message (:func:`suites.model.user_message`). ``""``:
            none (FDA: the whole prompt is the user message).
        stop_after_content: the whitespace-only stop sequences (``"\n"``) apply only after
            the answer's first non-space character (:func:`suites.answers.first_content_stop`):
            for a prompt that ends without a cue, to which a model may answer with a
            newline first (Table QA's article-exact prompt, ``answer_cue=""``).
        grammar: a GBNF grammar the answer is decoded under where the backend honours one
            (``kv``'s schema mode: the JSON Schema's grammar), or None.
        json_schema: the JSON Schema (JSON text) of the same constraint, for a backend that
            takes a schema (``response_format``) instead of a grammar
            (:func:`suites.model.applied_constraint`), or None.
    """

    id: str
    group: str
    prefix: str | LazyText
    suffix: str
    reference: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    max_tokens: int = 256
    stop: tuple[str, ...] = ()
    # chat and instruct models
    system: str = ""
    stop_after_content: bool = False
    grammar: str | None = None
    json_schema: str | None = None

    @property
    def suite(self) -> str:
        """The suite name: the part of ``id`` before the first ``/``."""
        return self.id.split("/", 1)[0]

    def to_json(self) -> dict[str, Any]:
        """JSON-safe dict of all fields (for caches of derived items)."""
        return {
            "id": self.id, "group": self.group, "prefix": str(self.prefix), "suffix": self.suffix,
            "reference": self.reference, "meta": dict(self.meta), "max_tokens": self.max_tokens,
            "stop": list(self.stop), "system": self.system,
            "stop_after_content": self.stop_after_content, "grammar": self.grammar,
            "json_schema": self.json_schema,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Item:
        """The inverse of :meth:`to_json`."""
        return cls(**{**data, "stop": tuple(data.get("stop", ()))})

    def request(self) -> Request:
        """The item's first model call, as :func:`suites.protocol.generate` makes it: its
        prompt, budget, system text, grammar and JSON Schema, and the stop sequences the engine gets (without
        the whitespace-only ones when ``stop_after_content``: those are applied afterwards)."""
        stop = engine_stops(self.stop) if self.stop_after_content else self.stop
        return Request(
            self.prompt, self.max_tokens, tuple(stop), self.grammar, prefix=str(self.prefix),
            route=self.group, system=self.system or None, json_schema=self.json_schema,
        )  # fmt: skip

    @property
    def prompt(self) -> str:
        """The exact text given to the model: ``prefix + suffix``."""
        return str(self.prefix) + self.suffix

    @property
    def prompt_chars(self) -> int:
        """Length of the prompt in characters, without building it."""
        return len(self.prefix) + len(self.suffix)

    @property
    def prompt_sha256(self) -> str:
        """Hex SHA-256 of the UTF-8 prompt (goes into the run record instead of the prompt)."""
        return hashlib.sha256(self.prompt.encode("utf-8")).hexdigest()


@dataclass
class SuiteData:
    """What a suite's loader returns.

    Attributes:
        items: every item of the suite, in a stable order.
        notes: JSON-safe facts about how the items were built (substitutions of data,
            tokenizer names); copied into the run record under ``suites.<name>``.
        missing_labels: where each label lies whose value was not found in its document
            (``items.jsonl:4``, ``K153137/applicant``): it is no item, so n shrinks; the
            record lists them (``suites.<name>.missing_labels``) and a gate counts them
            (``<name>/missing_labels <= 0``).
    """

    items: list[Item]
    notes: dict[str, Any] = field(default_factory=dict)
    missing_labels: list[str] = field(default_factory=list)
