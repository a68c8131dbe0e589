"""The ``kv`` suite's items: a user's JSON Lines file of (document, key, value), built into
FDA-style items (by default the prompt ``{chunk}\\n{key}:``, the chunk that holds the value;
``kv.prompt``, ``kv.system``, ``kv.max_tokens`` and ``kv.whole_document`` change that). With
``kv.schema`` the file holds (document, expected object) lines: :mod:`suites.kv.schema`.

Each line is one JSON object::

    {"document": "filings/k123.txt", "key": "applicant", "value": "Acme Medical"}
    {"document": "Invoice 7 ... Total: 12.50 EUR", "key": "total", "value": ["12.50", "12,50"]}

``document`` is a path (one line, ending in a file suffix such as ``.txt`` or ``.md``; relative
to the JSONL file's folder) or the document's text; ``value`` one accepted value or a list of
them; ``id`` (optional) names the item. Everything is checked before the first model call.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from extractbench.suites.derived_cache import digest_of
from extractbench.suites.fda.chunking import CHUNK_TOKENS
from extractbench.suites.fda.items import STOP, chunk_documents
from extractbench.suites.files import UserFiles
from extractbench.suites.item import DataError, Item, SuiteData
from extractbench.suites.jsonl import check_fields, iter_jsonl
from extractbench.suites.kv.options import FDA_PROMPT, KvOptions
from extractbench.suites.links import docs_url

__all__ = ["read_rows", "build_items", "load_items", "prompt_parts", "read_document", "kv_path"]

DEFAULTS = KvOptions()  # the suite's options when a caller gives none

_PATH_LIKE = re.compile(r"\.[A-Za-z0-9]{1,8}$")
_PLACEHOLDER = re.compile(r"\{(chunk|document|key)\}")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "x"


def _values(value: Any) -> list[str] | None:
    """``value`` as a non-empty list of non-empty strings; None when it is not one."""
    values = value if isinstance(value, list) else [value]
    if values and all(isinstance(v, str) and v.strip() for v in values):
        return [v.strip() for v in values]
    return None


def read_document(text: str, files: UserFiles, where: str) -> tuple[str, str]:
    """(doc_id, text) of a ``document`` field: a file's path as written (inside the items
    file's folder, or ``kv.root``), or the text."""
    if "\n" not in text and len(text) < 1024 and _PATH_LIKE.search(text.strip()):
        name = text.strip()
        try:
            return name, files.read_text(name, where)
        except DataError as exc:
            if str(exc).startswith(where):  # outside the folder: the line says so itself
                raise
            raise DataError(f"{where}: document {name!r} cannot be read: {exc}") from None
    return "text-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:12], text


def read_rows(
    path: Path, opts: KvOptions = DEFAULTS
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Read and check the items file; its documents must lie in its folder (or ``kv.root``),
    it and they within ``kv.max_file_mb``, each line within ``kv.max_line_mb``.

    Returns:
        (rows, documents): rows with ``line``, ``doc_id``, ``key``, ``values`` (list of
        str) and ``id`` (str or None), in file order; doc_id -> document text.

    Raises:
        DataError: ``file:line: ...`` for a line that is not a JSON object, lacks a field,
            has a field of the wrong type or an unknown one, names a document that cannot be
            read or lies outside the folder (links followed), or repeats an id or a
            (document, key) pair; a file or line over its limit; ``file: no items`` for a
            file without any.
    """
    rows: list[dict[str, Any]] = []
    documents: dict[str, str] = {}
    seen_ids: dict[str, int] = {}
    seen_pairs: dict[tuple[str, str], int] = {}
    files = UserFiles.of(opts, "kv", path.parent)
    for lineno, row in iter_jsonl(path, files):
        where = f"{path}:{lineno}"
        check_fields(row, where, ("document", "key", "value"), ("id",), ("document", "key", "id"))
        values = _values(row["value"])
        if values is None:
            raise DataError(f"{where}: value must be a non-empty string or a list of them")
        item_id = row.get("id")
        doc_id, text = read_document(row["document"], files, where)
        if not text.strip():
            raise DataError(f"{where}: document {doc_id!r} is empty")
        documents[doc_id] = text
        key = row["key"].strip()
        if item_id is not None:
            if item_id in seen_ids:
                raise DataError(f"{where}: duplicate id {item_id!r} (line {seen_ids[item_id]})")
            seen_ids[item_id] = lineno
        elif (doc_id, key) in seen_pairs:
            raise DataError(f"{where}: duplicate item: document {doc_id!r}, key {key!r} (line "
                            f"{seen_pairs[(doc_id, key)]}); give each an id")  # fmt: skip
        seen_pairs.setdefault((doc_id, key), lineno)
        rows.append({"line": lineno, "doc_id": doc_id, "key": key, "values": values,
                     "id": item_id})  # fmt: skip
    if not rows:
        raise DataError(
            f"{path}: no items (one JSON object per line, see {docs_url('docs/suites/kv.md')})"
        )
    return rows, documents


def prompt_parts(template: str, system: str, document: str, key: str) -> tuple[str, str]:
    """(prefix, suffix) of an item's prompt: ``template`` with ``{chunk}`` (or
    ``{document}``) replaced by ``document`` and ``{key}`` by ``key`` (other braces are
    kept as written); ``system`` and a blank line before it when given. The prefix is the
    part before the first ``{key}`` when that part holds the document (shared by the
    document's items, its KV cache reused), else only the system text.

    ``prompt_parts(FDA_PROMPT, "", chunk, key) == (chunk + "\\n", key + ":")``: the FDA
    task's prompt.
    """

    def fill(text: str) -> str:  # one pass: a document's own "{key}" stays as written
        return _PLACEHOLDER.sub(lambda m: key if m.group(1) == "key" else document, text)

    head, _, _ = template.partition("{key}")
    lead = system + "\n\n" if system else ""
    full = lead + fill(template)
    prefix = lead + fill(head) if ("{chunk}" in head or "{document}" in head) else lead
    return prefix, full[len(prefix) :]


def build_items(
    rows: list[dict[str, Any]],
    docs: dict[str, str],
    spans: dict[str, list[tuple[int, int]]],
    opts: KvOptions = DEFAULTS,
) -> tuple[list[Item], list[int]]:
    """One item per row, in the first span (chunk, or the whole document) of its document
    that contains one of its values (case-insensitive, as the FDA metric matches), as the
    FDA suite places its labels; its prompt from ``kv.prompt`` and ``kv.system``
    (:func:`prompt_parts`), its budget ``kv.max_tokens``, stopping at a newline (after the
    answer's first non-space character when the prompt is not the FDA one: a chat or
    instruction prompt may be answered on a new line).

    Returns:
        (items, unmatched): items ordered by document, chunk, then file order (a chunk's
        items consecutive: one group); the line numbers of rows whose values occur in no
        single chunk (no item).
    """
    placed: dict[tuple[str, int], list[Item]] = {}
    unmatched: list[int] = []
    own_prompt = opts.prompt != FDA_PROMPT or bool(opts.system)
    for row in rows:
        doc_id, key = row["doc_id"], row["key"]
        patterns = [re.compile(re.escape(v), re.IGNORECASE) for v in row["values"]]
        for index, (a, b) in enumerate(spans[doc_id]):
            chunk = docs[doc_id][a:b]
            if any(p.search(chunk) for p in patterns):
                group = f"kv/{_slug(doc_id)}/c{index}"
                prefix, suffix = prompt_parts(opts.prompt, opts.system, chunk, key)
                placed.setdefault((doc_id, index), []).append(
                    Item(
                        id=f"{group}/{_slug(row['id'] or key)}", group=group, prefix=prefix,
                        suffix=suffix, reference=row["values"][0],
                        meta={"key": key, "doc_id": doc_id, "chunk": index,
                              "values": row["values"], "line": row["line"]},
                        max_tokens=opts.max_tokens, stop=STOP, system=opts.system,
                        stop_after_content=own_prompt,
                    )
                )  # fmt: skip
                break
        else:
            unmatched.append(row["line"])
    order = {doc_id: n for n, doc_id in enumerate(docs)}
    keys = sorted(placed, key=lambda k: (order[k[0]], k[1]))
    return [item for k in keys for item in placed[k]], unmatched


def whole_spans(
    docs: dict[str, str],
    spans: dict[str, list[tuple[int, int]]],
    budget: int,
    template: str,
    opts: KvOptions,
) -> dict[str, list[tuple[int, int]]]:
    """Each document as one span, where its prompt fits ``kv.context_tokens``.

    A document's tokens are bounded by its chunks (at most :data:`CHUNK_TOKENS` each); the
    template and system text by their characters (at least one character a token).

    Raises:
        DataError: a document whose bound, with the template and ``budget``, exceeds
            ``kv.context_tokens`` (one line naming it and both ways out).
    """
    overhead = len(template) + len(opts.system) + 2
    for doc_id in docs:
        need = len(spans[doc_id]) * CHUNK_TOKENS + overhead + budget
        if need > opts.context_tokens:
            raise DataError(
                f"document {doc_id!r} does not fit kv.context_tokens={opts.context_tokens}: "
                f"up to {need} tokens ({len(spans[doc_id])} chunks of {CHUNK_TOKENS}, the "
                f"prompt, {budget} to generate); raise kv.context_tokens to your model's "
                "context window, or unset kv.whole_document to prompt chunk by chunk"
            )
    return {doc_id: [(0, len(text))] for doc_id, text in docs.items()}


def kv_path(opts: KvOptions) -> Path:
    """``kv.path``, expanded.

    Raises:
        DataError: not given, or not a file (one line saying what it must be).
    """
    if opts.path is None:
        raise DataError("kv.path=FILE is required: the JSON Lines file of your items "
                        f"(--suite-option kv.path=items.jsonl; {docs_url('docs/suites/kv.md')})")  # fmt: skip
    path = opts.path.expanduser()
    if not path.is_file():
        raise DataError(f"kv.path={opts.path}: no such file")
    return path


def load_items(data_dir: Path | None, opts: KvOptions = DEFAULTS) -> SuiteData:
    """The items of ``kv.path`` (the data dir is not read); with ``kv.schema`` the schema
    mode's (:func:`suites.kv.schema.load_objects`: :func:`suites.kv.suite.load` decides).

    Documents are chunked as the FDA suite's are (1,920 tokens of the packaged default
    model's Gemma 3 tokenizer, whatever model is evaluated), or each taken whole
    (``kv.whole_document``, :func:`whole_spans`). A row whose values occur in no single
    chunk is no item: ``missing_labels`` lists it (``file:line``). The notes name the
    protocol (:meth:`suites.kv.options.KvOptions.protocol`).

    Raises:
        DataError: ``kv.path`` not given or not a file, a bad line (see :func:`read_rows`),
            a whole document over ``kv.context_tokens``.
    """
    path = kv_path(opts)
    rows, docs = read_rows(path, opts)

    spans, tokenizer_name = chunk_documents(docs)
    if opts.whole_document:
        spans = whole_spans(docs, spans, opts.max_tokens, opts.prompt, opts)
    items, unmatched = build_items(rows, docs, spans, opts)
    if not items:
        raise DataError(f"{path}: no item: no row's value occurs in its document")
    notes: dict[str, Any] = {
        "source": "the user's items (kv.path), the FDA task's protocol (Arora et al. 2024, Based)"
        if opts.protocol() == DEFAULTS.protocol()
        else "the user's items (kv.path), the user's protocol",
        "path": str(path.resolve()),
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "documents": len(docs),
        "documents_sha256": digest_of(part for d in sorted(docs) for part in (d, docs[d])),
        "rows": len(rows),
        "tokenizer": tokenizer_name,
        "chunks": sum(len(s) for s in spans.values()),
        "max_tokens": opts.max_tokens,
        "stop": list(STOP),
        "protocol": opts.protocol(),
    }
    return SuiteData(items=items, notes=notes, missing_labels=[f"{path}:{n}" for n in unmatched])
