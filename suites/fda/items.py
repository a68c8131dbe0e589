"""FDA items: (the chunk containing the value, the key), prompt ``{chunk}\\n{key}:``.

Source: Arora et al. 2024 (Based), FDA task; lm-evaluation-harness ``fda`` task
(``until ["\\n"]``, ``max_gen_toks 48``). Data: ``fda/`` under the data dir
(docs/data.md, "fda": FDA 510(k) decision summaries with silver key-value labels).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from extractbench.suites.derived_cache import cached_json, digest_of
from extractbench.suites.fda.chunking import CHUNK_TOKENS, ChunkingError, chunk_apart
from extractbench.suites.fda.labels import apply_rule
from extractbench.suites.fda.suite import FdaOptions
from extractbench.suites.files import data_file, data_folder, inside, read_text
from extractbench.suites.item import DataError, DataMissing, Item, SuiteData
from extractbench.suites.jsonl import iter_jsonl
from extractbench.suites.links import docs_url, install_command
from extractbench.suites.protocol import Loader

__all__ = [
    "LABELS_FILE", "MAX_TOKENS", "STOP", "read_labels", "build_items", "load_items",
    "load_based_fda", "chunk_documents",
]  # fmt: skip

DEFAULTS = FdaOptions()  # the suite's options when a caller gives none

LABELS_FILE = "fda/fda_kv_labels_derived.jsonl"
MAX_TOKENS = 48
STOP = ("\n",)
_FIELDS = ("doc_id", "doc_file", "key", "value")


def read_labels(path: Path) -> list[dict[str, Any]]:
    """Read the key-value labels, one JSON object per line.

    Returns:
        Dicts with at least ``doc_id``, ``doc_file``, ``key``, ``value`` (all strings),
        in file order.

    Raises:
        DataError: a line is not a JSON object with those string fields, its
            ``doc_file`` leaves the data folder, or a
            (doc_id, key) pair repeats; the message gives ``file:line``.
    """
    labels = []
    seen: set[tuple[str, str]] = set()
    for lineno, row in iter_jsonl(path):
        bad = [f for f in _FIELDS if not isinstance(row.get(f), str) or not row[f].strip()]
        if bad:
            raise DataError(f"{path}:{lineno}: missing or empty field(s) {', '.join(bad)}")
        inside(
            path.parent.parent,
            str(Path(path.parent.name) / row["doc_file"]),
            f"{path}:{lineno}: doc_file",
        )
        pair = (row["doc_id"], row["key"])
        if pair in seen:
            raise DataError(f"{path}:{lineno}: duplicate label for {row['doc_id']} / {row['key']}")
        seen.add(pair)
        labels.append(row)
    return labels


def _slug(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")


def build_items(
    labels: list[dict[str, Any]], docs: dict[str, str], spans: dict[str, list[tuple[int, int]]]
) -> tuple[list[Item], list[str]]:
    """Turn labels into items, one per label whose value occurs in a chunk.

    The item's chunk is the first chunk of the document that contains the value
    (case-insensitive, as the metric matches). Items are ordered by document, chunk,
    then label order, so the items of one chunk (one group) are consecutive.

    Args:
        labels: rows from :func:`read_labels`.
        docs: doc_id -> document text.
        spans: doc_id -> chunk spans from :func:`suites.fda.chunking.chunk_spans`.

    Returns:
        (items, unmatched) where unmatched lists ``doc_id/key`` of labels whose value
        occurs in no single chunk (e.g. split by a chunk boundary).
    """
    placed: dict[tuple[str, int], list[Item]] = defaultdict(list)
    prefixes = {
        doc_id: [docs[doc_id][a:b] + "\n" for a, b in doc_spans]
        for doc_id, doc_spans in spans.items()
    }
    unmatched = []
    for row in labels:
        doc_id, key, value = row["doc_id"], row["key"], row["value"]
        pattern = re.compile(re.escape(value.strip()), re.IGNORECASE)
        for index, prefix in enumerate(prefixes[doc_id]):
            if pattern.search(prefix[:-1]):
                group = f"fda/{doc_id}/c{index}"
                placed[(doc_id, index)].append(
                    Item(
                        id=f"{group}/{_slug(key)}",
                        group=group,
                        prefix=prefix,
                        suffix=f"{key}:",
                        reference=value,
                        meta={
                            "key": key,
                            "doc_id": doc_id,
                            "chunk": index,
                            "panel": row.get("panel", ""),
                        },
                        max_tokens=MAX_TOKENS,
                        stop=STOP,
                    )
                )
                break
        else:
            unmatched.append(f"{doc_id}/{key}")
    items = [item for pos in sorted(placed) for item in placed[pos]]
    return items, unmatched


def chunk_documents(docs: dict[str, str]) -> tuple[dict[str, list[tuple[int, int]]], str]:
    """Each document's chunk spans (:func:`suites.fda.chunking.chunk_spans`, 1,920 tokens of
    the packaged default model's Gemma 3 tokenizer, whatever model is evaluated), cached in
    the user cache by the documents' text and the model file's SHA-256; and the tokenizer's
    name. ``docs``: doc_id -> text. On a miss the tokenizer runs in a process of its own
    with no GPU visible (:func:`suites.fda.chunking.chunk_apart`).

    Raises:
        DataError: the tokenizer's pieces do not reproduce a document's text.
    """
    from extractbench.suites.model_files import default_model_path, file_sha256

    model_path = default_model_path()
    sha = file_sha256(model_path)
    return _chunk_cached(docs, lambda: chunk_apart(docs, model_path, sha), sha)


def _chunk_cached(
    docs: dict[str, str],
    compute_spans: Callable[[], tuple[dict[str, list[tuple[int, int]]], str]],
    tokenizer_sha: str,
) -> tuple[dict[str, list[tuple[int, int]]], str]:

    def compute() -> dict[str, Any]:
        try:
            spans, name = compute_spans()
        except ChunkingError as exc:
            raise DataError(str(exc)) from None
        return {"tokenizer": name, "spans": spans}

    parts: list[str] = [tokenizer_sha, str(CHUNK_TOKENS)]
    for doc_id in sorted(docs):
        parts += [doc_id, docs[doc_id]]
    value = cached_json("fda-chunks", digest_of(parts), compute)
    spans = {k: [(int(a), int(b)) for a, b in v] for k, v in value["spans"].items()}
    return spans, value["tokenizer"]


def load_items(data_dir: Path | None, opts: FdaOptions = DEFAULTS) -> SuiteData:
    """Build the FDA suite from ``data_dir/fda``.

    Documents are chunked into 1,920-token chunks with the Gemma 3 tokenizer of the
    packaged default model, whatever model is evaluated (chunk spans are cached in the
    user cache, keyed by document contents and tokenizer).

    Labels go through the heading-residue rule (:mod:`suites.fda.labels`) first: a label
    it drops is no item, and the run record names every label it changed or dropped.

    ``opts.source`` ``based-fda`` reads the Based paper's own dataset through the
    ``datasets`` library instead (:func:`load_based_fda`).

    Raises:
        DataMissing: the labels file is absent.
        DataError: a label line is malformed or names a document that is absent.
    """
    if opts.source == "based-fda":
        return load_based_fda(opts.dataset, opts.split)
    labels_path = data_file(data_folder(data_dir, "fda"), LABELS_FILE)
    if not labels_path.is_file():
        raise DataMissing(f"{labels_path} not found (see {docs_url('docs/data.md#fda')})")
    labels, label_rule = apply_rule(read_labels(labels_path))
    docs: dict[str, str] = {}
    for row in labels:
        if row["doc_id"] not in docs:
            docs[row["doc_id"]] = read_text(labels_path.parent / row["doc_file"])

    spans, tokenizer_name = chunk_documents(docs)
    items, unmatched = build_items(labels, docs, spans)
    notes: dict[str, Any] = {
        "source": "Arora et al. 2024 (Based) FDA task; lm-evaluation-harness fda",
        "data": "FDA 510(k) decision summaries (MinerU markdown) with silver heading-derived "
        "labels, substituting for hazyresearch/based-fda (not reachable offline)",
        "tokenizer": tokenizer_name,
        "chunk_tokens": CHUNK_TOKENS,
        "documents": len(docs),
        "chunks": sum(len(s) for s in spans.values()),
        "labels": len(labels),
        "label_rule": label_rule,
        "max_tokens": MAX_TOKENS,
        "stop": list(STOP),
    }
    return SuiteData(items=items, notes=notes, missing_labels=unmatched)


# the suite declares this loader by name (suites.protocol.lazy): its type is checked here
LOADER: Loader[FdaOptions] = load_items


def load_based_fda(dataset: str, split: str = "validation") -> SuiteData:
    """The Based paper's FDA task data (``hazyresearch/based-fda``, the data of
    lm-evaluation-harness's ``fda`` task) through the ``datasets`` library.

    Each row's ``text`` is already the prompt ``{chunk}\\n{key}:`` and ``value`` the
    target (lm-evaluation-harness ``lm_eval/tasks/fda/task.py``); the prompt is used
    as is (task version 0; version 1 strips it). Rows sharing a chunk form one group.

    Args:
        dataset: a hub id, or a local folder holding the split as data files
            (``validation.jsonl``, parquet, ...) in the same schema.
        split: the split to read.

    Raises:
        DataError: the ``datasets`` library is not installed (the ``hub`` extra), the
            dataset cannot be loaded, or a row lacks ``text``/``value``.
    """
    import hashlib

    try:
        import datasets
    except ImportError:
        raise DataError(
            f"fda.source=based-fda needs the datasets library: {install_command('hub')}"
        ) from None
    try:
        # a split's rows: plain records, each checked below
        rows = cast(Iterable[Mapping[str, Any]], datasets.load_dataset(dataset, split=split))
    except Exception as exc:  # hub unreachable, no such dataset or split
        raise DataError(
            f"fda.dataset={dataset} ({split}): cannot be loaded: {type(exc).__name__}: {exc}"
        ) from None
    grouped: dict[str, list[Item]] = {}
    for index, row in enumerate(rows):
        text, value = row.get("text"), row.get("value")
        if not isinstance(text, str) or not isinstance(value, str) or "\n" not in text:
            raise DataError(
                f"{dataset} ({split}) row {index}: needs text '{{chunk}}\\n{{key}}:' and value strings"
            )
        chunk, _, cue = text.rpartition("\n")
        key = str(row.get("key") or cue.rstrip(":").strip())
        group = "fda/based/" + hashlib.sha1(chunk.encode("utf-8")).hexdigest()[:12]
        grouped.setdefault(group, []).append(
            Item(
                id=f"{group}/{index:05d}-{_slug(key)}", group=group, prefix=chunk + "\n",
                suffix=cue, reference=value.strip(), meta={"key": key, "row": index},
                max_tokens=MAX_TOKENS, stop=STOP,
            )
        )  # fmt: skip
    items = [item for group in grouped.values() for item in group]
    notes = {
        "source": "Arora et al. 2024 (Based) FDA task data, hazyresearch/based-fda "
        "(lm-evaluation-harness fda, task version 0: prompt not stripped)",
        "dataset": dataset, "split": split, "rows": len(items), "chunks": len(grouped),
        "max_tokens": MAX_TOKENS, "stop": list(STOP),
    }  # fmt: skip
    return SuiteData(items=items, notes=notes)
