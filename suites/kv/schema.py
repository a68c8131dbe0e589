"""``kv``'s schema mode: the model writes one JSON object per document under the team's
JSON Schema, scored field by field.

Items: each line of ``kv.path`` is ``{"document": PATH or text, "expected": {...}}`` (``id``
optional); ``kv.schema`` is a JSON Schema (any draft the jsonschema library knows) of one
object. Each document is one item: the prompt ``kv.schema_prompt`` with the whole document,
the keys and the schema; decoding is constrained by the schema (its strings bounded by
``maxLength``): as its grammar where the backend honours one (llama.cpp's own
JSON-Schema-to-GBNF converter: llama.cpp in process, ``llama-server``), else as the schema
itself where the backend takes one (``response_format`` ``json_schema`` on other
OpenAI-compatible servers), else not at all (``hf``); each item records which
(:data:`CONSTRAINTS`). The budget comes from the schema. The answer is parsed by
:func:`suites.answers.json_in_answer` (MINEA's parser) and scored per field with the
``kv`` metrics (:mod:`suites.kv.metrics`).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from extractbench.suites import safe_json
from extractbench.suites.answers import json_in_answer
from extractbench.suites.derived_cache import digest_of
from extractbench.suites.fda.chunking import CHUNK_TOKENS
from extractbench.suites.files import UserFiles
from extractbench.suites.item import DataError, Item, SuiteData
from extractbench.suites.jsonl import check_fields, iter_jsonl
from extractbench.suites.kv.metrics import matches
from extractbench.suites.kv.options import KvOptions
from extractbench.suites.model import Backend, applied_constraint
from extractbench.suites.protocol import ItemResult, generate

__all__ = [
    "read_schema", "bounded", "max_chars", "schema_grammar", "load_objects", "value_text",
    "score_object", "run_document", "field_metric", "CONSTRAINTS",
]  # fmt: skip

# what an item's ``details.constraint`` says, by :func:`suites.model.applied_constraint`
CONSTRAINTS = {
    "grammar": "json-schema grammar",
    "json_schema": "response_format json_schema",
    "none": "none",
}

_SCALAR_CHARS = {"number": 24, "integer": 20, "boolean": 5, "null": 4}
_OPEN_CHARS = 64  # a value the schema does not bound (no type, an open object)


def read_schema(path: Path, files: UserFiles) -> dict[str, Any]:
    """The JSON Schema at ``path``, checked against its draft's meta-schema.

    Raises:
        DataError: unreadable, not JSON, not a valid JSON Schema, or not a schema of one
            object with ``properties`` (one line naming the file).
    """
    import jsonschema.validators

    try:
        schema = safe_json.loads(files.read_text(path.name, str(path)))
    except json.JSONDecodeError as exc:
        raise DataError(f"kv.schema={path}: not valid JSON ({exc.msg})") from None
    if not isinstance(schema, dict):
        raise DataError(f"kv.schema={path}: a JSON Schema is a JSON object")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise DataError(f"kv.schema={path}: not a valid JSON Schema: {exc.message}") from None
    properties = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(properties, dict) or not properties:
        raise DataError(f"kv.schema={path}: must be a schema of one object "
                        '({"type": "object", "properties": {...}})')  # fmt: skip
    return schema


def bounded(schema: dict[str, Any], max_string: int) -> dict[str, Any]:
    """A copy of ``schema`` whose every string (``"type": "string"`` without ``enum``,
    ``const``, ``pattern`` or ``format``) has a ``maxLength``: ``max_string`` where it had
    none. Unbounded strings let a small model run on inside one until the budget ends."""
    out = copy.deepcopy(schema)

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            plain = not any(k in node for k in ("enum", "const", "pattern", "format"))
            if node.get("type") == "string" and plain and "maxLength" not in node:
                node["maxLength"] = max_string
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(out)
    return out


def max_chars(schema: Any) -> int:
    """An upper bound of the characters of a compact JSON value ``schema`` allows (an
    object's keys, quotes, separators and values; a string's ``maxLength``, two characters
    a character for escapes; an array's ``maxItems``, else 4), :data:`_OPEN_CHARS` for a
    value it does not bound. A token holds at least one character, so it bounds tokens."""
    if not isinstance(schema, dict):
        return _OPEN_CHARS
    if "enum" in schema or "const" in schema:
        options = schema.get("enum", [schema.get("const")])
        return max(len(json.dumps(o, ensure_ascii=False)) for o in options) + 1
    kind = schema.get("type")
    if kind == "object" and isinstance(schema.get("properties"), dict):
        props = schema["properties"]
        return 2 + sum(len(json.dumps(k)) + 3 + max_chars(v) for k, v in props.items())
    if kind == "array":
        return 2 + int(schema.get("maxItems", 4)) * (max_chars(schema.get("items")) + 2)
    if kind == "string" and "maxLength" in schema:
        return 2 + 2 * int(schema["maxLength"])
    return _SCALAR_CHARS.get(str(kind), _OPEN_CHARS)


def schema_grammar(schema: dict[str, Any], where: str) -> str:
    """The GBNF grammar of ``schema``: llama.cpp's own converter (``json_schema_to_gbnf``,
    shipped with llama-cpp-python), what llama.cpp and llama-server apply for a JSON
    Schema.

    Raises:
        DataError: the converter does not support a part of the schema (one line).
    """
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    try:
        return json_schema_to_gbnf(json.dumps(schema))
    except Exception as exc:  # the converter raises bare ValueError/KeyError/... on what it lacks
        raise DataError(f"{where}: llama.cpp's grammar converter cannot read it "
                        f"({type(exc).__name__}: {exc}); set kv.constrain=false") from None  # fmt: skip


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "x"


def field_metric(name: str) -> str:
    """The metric name of one field's score: ``field/NAME`` (characters a metric name
    cannot hold as ``_``)."""
    return "field/" + re.sub(r"[^A-Za-z0-9_.\-]+", "_", name)


def load_objects(data_dir: Path | None, opts: KvOptions) -> SuiteData:
    """Schema mode's items: one per line of ``kv.path`` (a document and its expected object),
    its prompt ``kv.schema_prompt`` with the whole document, its grammar and JSON Schema
    the bounded schema's (``kv.constrain``), its budget ``kv.schema_max_tokens`` or :func:`max_chars`
    of the bounded schema.

    Raises:
        DataError: a bad schema (:func:`read_schema`), a line that is not an object with
            ``document`` and ``expected`` (an object valid under the schema), a repeated
            id or document without ids, a document whose prompt and budget exceed
            ``kv.context_tokens``, a file without lines.
    """
    import jsonschema.exceptions
    import jsonschema.validators

    from extractbench.suites.fda.items import chunk_documents
    from extractbench.suites.kv.items import kv_path, read_document

    path = kv_path(opts)
    files = UserFiles.of(opts, "kv", path.parent)
    assert opts.schema_file is not None
    schema_path = opts.schema_file.expanduser()
    schema_files = UserFiles.of(opts, "kv", schema_path.parent)
    schema = read_schema(schema_path, schema_files)
    limited = bounded(schema, opts.schema_max_string)
    validator = jsonschema.validators.validator_for(schema)(schema)
    fields = list(schema["properties"])
    budget = opts.schema_max_tokens or max_chars(limited)
    grammar = schema_grammar(limited, f"kv.schema={schema_path}") if opts.constrain else None
    constraint = json.dumps(limited, ensure_ascii=False, sort_keys=True) if grammar else None
    rows: list[dict[str, Any]] = []
    docs: dict[str, str] = {}
    seen: dict[str, int] = {}
    for lineno, row in iter_jsonl(path, files):
        where = f"{path}:{lineno}"
        check_fields(row, where, ("document", "expected"), ("id",), ("document", "id"))
        expected = row["expected"]
        if not isinstance(expected, dict) or not expected:
            raise DataError(f"{where}: expected must be a non-empty JSON object")
        error = jsonschema.exceptions.best_match(validator.iter_errors(expected))
        if error is not None:
            at = "/".join(map(str, error.absolute_path)) or "the object"
            raise DataError(f"{where}: expected is not valid under kv.schema ({at}: "
                            f"{error.message})")  # fmt: skip
        doc_id, text = read_document(row["document"], files, where)
        if not text.strip():
            raise DataError(f"{where}: document {doc_id!r} is empty")
        name = row.get("id") or doc_id
        if name in seen:
            raise DataError(
                f"{where}: duplicate item {name!r} (line {seen[name]}); give each an id"
            )
        seen[name] = lineno
        docs[doc_id] = text
        rows.append({"line": lineno, "doc_id": doc_id, "name": name, "expected": expected})
    if not rows:
        raise DataError(f"{path}: no items (one JSON object per line)")
    spans, tokenizer_name = chunk_documents(docs)
    schema_text = json.dumps(schema, ensure_ascii=False)
    keys = ", ".join(fields)
    items = []
    for row in rows:
        body = opts.schema_prompt.replace("{schema}", schema_text).replace("{fields}", keys)
        need = len(spans[row["doc_id"]]) * CHUNK_TOKENS + len(body) + len(opts.system) + budget
        if need > opts.context_tokens:
            raise DataError(
                f"{path}:{row['line']}: document {row['doc_id']!r} does not fit "
                f"kv.context_tokens={opts.context_tokens}: up to {need} tokens with the prompt "
                f"and {budget} to generate; raise kv.context_tokens to your model's context "
                "window or lower kv.schema_max_tokens"
            )
        prompt = (opts.system + "\n\n" if opts.system else "") + body.replace(
            "{document}", docs[row["doc_id"]]
        )
        item_id = f"kv/{_slug(row['name'])}/object"
        items.append(
            Item(
                id=item_id, group=item_id, prefix=prompt, suffix="",
                reference=json.dumps(row["expected"], ensure_ascii=False),
                meta={"key": "(object)", "doc_id": row["doc_id"], "line": row["line"],
                      "expected": row["expected"]},
                max_tokens=budget, system=opts.system, grammar=grammar, json_schema=constraint,
            )
        )  # fmt: skip
    notes: dict[str, Any] = {
        "source": "the user's documents and expected objects (kv.path) under kv.schema",
        "mode": "schema",
        "path": str(path.resolve()),
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "schema_sha256": hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest(),
        "fields": fields,
        "documents": len(docs),
        "documents_sha256": digest_of(part for d in sorted(docs) for part in (d, docs[d])),
        "rows": len(rows),
        "tokenizer": tokenizer_name,
        "max_tokens": budget,
        "grammar": "llama.cpp json_schema_to_gbnf of kv.schema, strings bounded"
        if grammar
        else "none (kv.constrain=false)",
        "grammar_sha256": hashlib.sha256(grammar.encode()).hexdigest() if grammar else None,
        "json_schema_sha256": hashlib.sha256(constraint.encode()).hexdigest()
        if constraint
        else None,
        "protocol": opts.protocol(),
    }
    return SuiteData(items=items, notes=notes)


def value_text(value: Any) -> str:
    """A JSON value as the metrics read it: a string as it is, anything else as compact JSON
    (keys sorted)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def score_object(
    answer: Any, expected: dict[str, Any], opts: KvOptions
) -> tuple[dict[str, float], dict[str, list[str]]]:
    """Each expected field scored in ``answer`` (the parsed answer, None when it did not
    parse) with its metric (``kv.metrics`` by field name, else ``kv.metric``).

    Returns:
        (fields, lists): field name -> 1.0 or 0.0 (a missing field 0.0); ``missing``
        (expected, absent from the answer), ``wrong`` (present, not matching) and ``extra``
        (in the answer, not expected) field names, each in order.
    """
    got = answer if isinstance(answer, dict) else {}
    settings = opts.metric_settings()
    scores: dict[str, float] = {}
    lists: dict[str, list[str]] = {"missing": [], "wrong": [], "extra": []}
    for name, value in expected.items():
        if name not in got:
            scores[name] = 0.0
            lists["missing"].append(name)
            continue
        right = matches(value_text(got[name]), value_text(value), opts.metric_for(name), settings)
        scores[name] = right
        if not right:
            lists["wrong"].append(name)
    lists["extra"] = [name for name in got if name not in expected]
    return scores, lists


@functools.lru_cache(maxsize=8)
def _validator(path: str) -> Any:
    """The jsonschema validator of the schema file at ``path`` (read once per process; the
    loader checked it before the first model call)."""
    import jsonschema.validators

    schema = safe_json.loads(Path(path).read_text(encoding="utf-8"))
    return jsonschema.validators.validator_for(schema)(schema)


def run_document(item: Item, model: Backend, opts: KvOptions) -> ItemResult:
    """Generate the object of one document (under the item's grammar or JSON Schema where
    ``model`` honours one: :func:`suites.model.applied_constraint`) and score it.

    Scores: ``accuracy`` 1.0 when every expected field matches (the document is right),
    ``field_accuracy`` the share of expected fields that match, ``json_valid`` 1.0 when
    the answer is one JSON object as a whole, ``schema_valid`` 1.0 when that object is
    valid under ``kv.schema`` (jsonschema), and ``field/NAME`` per expected field. Details:
    the constraint applied (:data:`CONSTRAINTS`), the parse problem, missing, wrong and extra fields.

    Raises:
        ModelError: from the backend.
    """
    generation = generate(item, model)
    value, _, problem = json_in_answer(generation.text)
    is_object = not problem and isinstance(value, dict)
    if not problem and not is_object:
        problem = "not a JSON object"
    assert opts.schema_file is not None
    schema_valid = is_object and _validator(str(opts.schema_file.expanduser())).is_valid(value)
    fields, lists = score_object(value if is_object else None, item.meta["expected"], opts)
    constraint = applied_constraint(item.grammar, item.json_schema, model.capabilities)
    scores: dict[str, float | None] = {
        "accuracy": float(all(fields.values())),
        "field_accuracy": sum(fields.values()) / len(fields),
        "json_valid": float(is_object),
        "schema_valid": float(schema_valid),
        **{field_metric(name): right for name, right in fields.items()},
    }
    details = {
        "constraint": CONSTRAINTS[constraint],
        "problem": problem,
        **lists,
    }
    return ItemResult(scores, generation, details)
