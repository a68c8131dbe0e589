"""Schema-guided, iterated extraction (MINEA Sections 3.2, 4.1 and 5.1).

The document is split into pieces at paragraph boundaries. Each piece is extracted by
``1 + iterations`` calls: the first asks for the entities of the piece, each further call
asks to continue the extraction, with the history (every entity extracted so far in this
thread, including earlier pieces) in the prompt. When the prompt plus the generation
budget would exceed the context window, a new independent extraction (thread) starts with
an empty history. All entities of all pieces are appended into one output.

The paper's extraction prompt is not published; ours gives what Section 3.2 says the
prompt gives: the schema (types and properties), the task of populating it, attention to
nested entities, consistency and uniqueness. Output: a JSON array of entities, constrained
by :data:`ENTITY_GRAMMAR` where the backend supports grammars.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from extractbench.suites.minea.entities import (
    entity_text,
    entity_values,
    parse_answer,
    parse_entities,
)
from extractbench.suites.minea.schema import Schema
from extractbench.suites.model import Backend, CountsTokens, ModelError, ask

__all__ = [
    "ENTITY_GRAMMAR",
    "Extraction",
    "CallLog",
    "split_pieces",
    "parse_entities",
    "parse_answer",
    "extract_document",
    "entity_text",
    "entity_values",
]

ENTITY_GRAMMAR = r"""root ::= "[" ws (entity ("," ws entity){0,7})? ws "]"
entity ::= "{" ws "\"type\":" ws string "," ws "\"name\":" ws string "," ws "\"description\":" ws string "," ws "\"keywords\":" ws "[" (string ("," ws string){0,7})? "]" ("," ws prop){0,4} ws "}"
prop ::= key ":" ws string
key ::= "\"" [A-Za-z] [A-Za-z0-9_]{0,30} "\""
string ::= "\"" char{0,160} "\""
char ::= [^"\\\x7F\x00-\x1F] | "\\" ["\\/bfnrt]
ws ::= [ \n]{0,2}
"""

# the extraction instruction: the system-role text of a chat model (the prompt begins with it)
INSTRUCTION = """Extract the information in the text below as schema.org-style entities.
Schema (type: properties):
{schema}

Find every entity of these types in the text, including nested ones (e.g. the organization a person works for), and fill in its properties. Keep entities consistent and unique: never repeat an entity that is already extracted. Answer with a JSON array of objects with "type", "name", "description", "keywords" and the type's other properties."""
PROMPT = INSTRUCTION + "\n\nText:\n{piece}\n"
HISTORY = "\nAlready extracted:\n{lines}\n"
FIRST_CUE = "\nEntities (JSON array):\n"
CONTINUE_CUE = "\nContinue the extraction with entities not yet listed (JSON array):\n"

_PARAGRAPHS = re.compile(r"(?<=\n\n)")


def split_pieces(text: str, piece_chars: int) -> list[str]:
    """Split ``text`` into pieces of at most about ``piece_chars`` characters at paragraph
    boundaries (a longer paragraph is its own piece, cut at ``piece_chars``).

    ``"".join(pieces) == text``.

    Raises:
        ValueError: ``piece_chars < 1``.
    """
    if piece_chars < 1:
        raise ValueError(f"piece_chars must be at least 1, got {piece_chars}")
    pieces: list[str] = []
    current = ""
    for para in _PARAGRAPHS.split(text):
        while len(para) > piece_chars:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(para[:piece_chars])
            para = para[piece_chars:]
        if current and len(current) + len(para) > piece_chars:
            pieces.append(current)
            current = ""
        current += para
    if current:
        pieces.append(current)
    return pieces


@dataclass(frozen=True)
class CallLog:
    """One extraction call: which piece, iteration and thread; cost; what it gave."""

    piece: int
    iteration: int
    thread: int
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    entities: int
    parsed: bool
    reextraction: bool = False
    problem: str = ""


@dataclass
class Extraction:
    """The result of extracting one document.

    Attributes:
        pieces: the document's pieces.
        entities: ``(piece, iteration, entity)`` in extraction order.
        calls: one :class:`CallLog` per model call.
        threads: number of independent extractions (1 + context-window restarts).
        reextracted: piece -> entities re-extracted at the end (lost in the middle), when
            asked for; pieces whose re-extraction would not fit the window are absent.
    """

    pieces: list[str]
    entities: list[tuple[int, int, dict[str, Any]]] = field(default_factory=list)
    calls: list[CallLog] = field(default_factory=list)
    threads: int = 1
    reextracted: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def parse_failures(self) -> int:
        """Calls whose answer was not valid JSON as a whole."""
        return sum(not c.parsed for c in self.calls)

    def snapshot(self, iterations: int) -> list[dict[str, Any]]:
        """Entities from the calls with iteration <= ``iterations`` (Table 2's columns)."""
        return [e for _, it, e in self.entities if it <= iterations]

    def by_piece(self, piece: int) -> list[dict[str, Any]]:
        """Entities extracted from piece ``piece``."""
        return [e for p, _, e in self.entities if p == piece]


def _estimate_tokens(text: str) -> int:
    return len(text) // 3 + 1


def extract_document(
    model: Backend,
    schema: Schema,
    text: str,
    *,
    piece_chars: int = 4000,
    iterations: int = 3,
    max_tokens: int = 384,
    context_tokens: int = 4096,
    reextract: bool = False,
    on_call: Callable[[CallLog], None] | None = None,
) -> Extraction:
    """Extract ``text`` piece by piece with iterated calls and a history.

    Args:
        model: the backend; when its ``capabilities`` say it counts tokens, its
            ``count_tokens`` is used (else ~3 characters per token), and its
            ``capabilities.n_ctx`` where known (else ``context_tokens``).
        schema: the entity types and properties put into the prompt.
        text: the (enriched) document.
        piece_chars: piece size in characters.
        iterations: further calls per piece after the first (paper default 3).
        max_tokens: generation budget per call, in tokens.
        context_tokens: the context window the thread must fit (the smaller of this and
            the model's ``n_ctx``).
        reextract: after the document, extract every piece once more with the full history
            (Section 4.2, "lost in the middle").
        on_call: called after each call (progress, logging).

    Raises:
        ModelError: a piece alone (without history) does not fit the context window, or
            the backend failed.
    """
    capabilities = model.capabilities
    # a backend that announces count_tokens has the method (suites.model.Capabilities)
    count = cast(CountsTokens, model).count_tokens if capabilities.count_tokens else _estimate_tokens
    window = min(context_tokens, capabilities.n_ctx or context_tokens)
    result = Extraction(pieces=split_pieces(text, piece_chars))
    described = schema.describe()
    system = INSTRUCTION.format(schema=described)
    history: list[str] = []

    def call(piece_index: int, iteration: int, again: bool) -> list[dict[str, Any]] | None:
        nonlocal history
        base = PROMPT.format(schema=described, piece=result.pieces[piece_index])
        cue = FIRST_CUE if iteration == 0 else CONTINUE_CUE
        prompt = base + (HISTORY.format(lines="\n".join(history)) if history else "") + cue
        if history and count(prompt) + max_tokens > window:
            if again:
                return None  # a re-extraction only makes sense with the full history
            history = []  # restriction (I): a new independent extraction
            result.threads += 1
            prompt = base + cue
        if count(prompt) + max_tokens > window:
            raise ModelError(
                f"a piece of {len(result.pieces[piece_index])} characters does not fit the "
                f"context window of {window} tokens with {max_tokens} to generate; lower "
                "minea.piece_chars or minea.max_tokens"
            )
        generation = ask(
            model, prompt, max_tokens=max_tokens, grammar=ENTITY_GRAMMAR, system=system
        )
        entities, problem = parse_answer(generation.text)
        log = CallLog(
            piece=piece_index,
            iteration=iteration,
            thread=result.threads,
            prompt_tokens=generation.prompt_tokens,
            completion_tokens=generation.completion_tokens,
            latency_s=generation.latency_s,
            entities=len(entities),
            parsed=not problem,
            reextraction=again,
            problem=problem,
        )
        result.calls.append(log)
        if on_call:
            on_call(log)
        if not again:
            history += [json.dumps(e, ensure_ascii=False) for e in entities]
        return entities

    for piece_index in range(len(result.pieces)):
        for iteration in range(iterations + 1):
            for entity in call(piece_index, iteration, again=False) or []:
                result.entities.append((piece_index, iteration, entity))
    if reextract:
        for piece_index in range(len(result.pieces)):
            again = call(piece_index, 0, again=True)
            if again is not None:
                result.reextracted[piece_index] = again
    return result
