"""MINEA items: one per haystack (``minea/haystacks/*.md``), infused with needles.

The needle set is ``--suite-option minea.needles=PATH`` or, by default, the deterministic
template set (``needlegen.template_needles``, seed ``minea.seed``). Needles are dealt to
the documents in a seeded order that alternates types, each used once while the set
lasts; a document takes them from the next :data:`WINDOW` of that order, leaving out
those whose name occurs in it or in another of its needles and those sharing more than one
keyword with one before (:func:`suites.minea.collisions.select_needles`), until they make
up a share of its enriched text drawn from ``[min_share, max_share]``. The item's prompt
text is the enriched document; the extraction itself makes several calls (see
``extraction``).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import random
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from extractbench.suites import item as item_module
from extractbench.suites.derived_cache import cached_json, digest_of
from extractbench.suites.files import UserFiles, read_text
from extractbench.suites.item import DataError, Item, SuiteData
from extractbench.suites.meteor import wordnet_status
from extractbench.suites.minea.collisions import check_infusion, select_needles
from extractbench.suites.minea.encoder import MINILM, resolve_encoder
from extractbench.suites.minea.haystacks import MANIFEST, find_haystacks
from extractbench.suites.minea.infusion import infuse
from extractbench.suites.minea.names import contains_phrase, name_key, normalise
from extractbench.suites.minea.needlegen import template_header, template_needles
from extractbench.suites.minea.needles import (
    FORMAT,
    VERSION,
    Needle,
    NeedleSet,
    needles_text,
    read_needles,
)
from extractbench.suites.minea.options import MineaOptions
from extractbench.suites.minea.schema import Schema, load_schema
from extractbench.suites.protocol import Loader
from extractbench.suites.suite_options import dump_options

__all__ = ["MANIFEST", "load_items", "needle_set", "deal", "pick_decoys"]

DEFAULTS = MineaOptions()  # the suite's options when a caller gives none

WINDOW = 64  # needles of the dealing order a document may take from


def needle_set(opts: MineaOptions, schema: Schema) -> NeedleSet:
    """The run's needle set: the file of ``opts.needles`` or the template set (whose
    checksum is that of the file ``extractbench needles`` writes for the same options).

    Raises:
        DataError: an unreadable needle file, or needles of types not in the schema.
    """
    if opts.needles:
        path = Path(opts.needles).expanduser()
        chosen = read_needles(path, UserFiles.of(opts, "minea", path.parent))
    else:
        header = template_header(schema, opts.per_type, opts.seed)
        needles = tuple(template_needles(schema, opts.per_type, opts.seed))
        text = needles_text(header, needles)
        sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
        chosen = NeedleSet(
            needles, {"format": FORMAT, "version": VERSION, **header}, sha, "template"
        )
    unknown = sorted({n.type for n in chosen.needles} - set(schema.types))
    if unknown:
        raise DataError(f"needle set {chosen.path}: types not in the schema: {', '.join(unknown)}")
    return chosen


def pick_decoys(
    pool: Sequence[Needle], placed: Sequence[Needle], rng: random.Random, text: str
) -> list[Needle]:
    """One decoy per placed needle: a needle of the same type whose name does not occur
    (as whole words, :mod:`suites.minea.names`) in ``text`` (the enriched document), the
    judge's control: it should say "not extracted". Fewer when a type has no such needle."""
    text_key = normalise(text)
    by_type: dict[str, list[Needle]] = {}
    for needle in pool:
        if not contains_phrase(text_key, _name_key(needle.name)):
            by_type.setdefault(needle.type, []).append(needle)
    decoys: list[Needle] = []
    for needle in placed:
        options = [n for n in by_type.get(needle.type, []) if n not in decoys]
        if options:
            decoys.append(options[rng.randrange(len(options))])
    return decoys


@functools.lru_cache(maxsize=8192)
def _name_key(name: str) -> str:
    """:func:`name_key`, once per name: every document tests the whole pool's names."""
    return name_key(name)


def deal(needles: Sequence[Needle], seed: int) -> list[Needle]:
    """The order needles are dealt in: each type shuffled (seeded), then types alternated."""
    by_type: dict[str, list[Needle]] = {}
    for needle in needles:
        by_type.setdefault(needle.type, []).append(needle)
    rng = random.Random(f"deal/{seed}")
    queues = []
    for type_name in sorted(by_type):
        queue = list(by_type[type_name])
        rng.shuffle(queue)
        queues.append(queue)
    order: list[Needle] = []
    for round_ in range(max(len(q) for q in queues)):
        order += [q[round_] for q in queues if round_ < len(q)]
    return order


@functools.cache
def _code_digest() -> str:
    """Digest of what builds the items: this suite's code, the item's JSON form and the
    Faker release the template needles draw from (a change rebuilds the cached items)."""
    sources = sorted(Path(__file__).parent.glob("*.py")) + [Path(item_module.__file__)]
    return digest_of([*(p.read_bytes() for p in sources), metadata.version("faker")])


def _items_key(
    opts: MineaOptions, schema: Schema, haystacks: Sequence[tuple[str, Path, str]],
    texts: Sequence[str],
) -> str:  # fmt: skip
    """Digest of every input the items depend on (:func:`_build`)."""
    needles = b""
    if opts.needles:
        with contextlib.suppress(OSError):  # unreadable: _build's needle_set says so
            needles = Path(opts.needles).read_bytes()
    parts: list[bytes | str] = [_code_digest(), json.dumps(dump_options(opts), sort_keys=True),
                                repr((schema.types, schema.common)), needles]  # fmt: skip
    for (doc_id, _, panel), text in zip(haystacks, texts, strict=True):
        parts += [doc_id, panel, text]
    return digest_of(parts)


def _build(
    opts: MineaOptions, schema: Schema, haystacks: Sequence[tuple[str, Path, str]],
    texts: Sequence[str],
) -> dict[str, Any]:  # fmt: skip
    """Every document infused with its needles: ``{"items": [Item.to_json()...],
    "needle_set": {...}}``.

    Raises:
        DataError: see :func:`load_items`.
    """
    chosen = needle_set(opts, schema)
    order = deal(chosen.needles, opts.seed)
    items: list[Item] = []
    cursor = 0
    for (doc_id, path, panel), haystack in zip(haystacks, texts, strict=True):
        ahead = [order[(cursor + i) % len(order)] for i in range(min(len(order), WINDOW))]
        window, skipped = select_needles(haystack, ahead)  # new names, distinct keywords
        rng = random.Random(f"infuse/{opts.seed}/{doc_id}")
        try:
            infusion = infuse(haystack, window, rng, opts.min_share, opts.max_share)
        except ValueError as exc:
            raise DataError(f"{path}: {exc}") from None
        placed = {p.needle_id for p in infusion.placements}
        cursor += 1 + max(i for i, n in enumerate(ahead) if n.id in placed)
        needles = [n for n in window if n.id in placed]
        conflicts = check_infusion(haystack, needles)
        decoys = pick_decoys(chosen.needles, needles, rng, infusion.text)
        items.append(
            Item(
                id=f"minea/{doc_id}",
                group=f"minea/{doc_id}",
                prefix=infusion.text,
                suffix="",
                reference="\n".join(f"{n.type}: {n.name}" for n in needles),
                meta={
                    "doc_id": doc_id,
                    "panel": panel,
                    "chars": len(infusion.text),
                    "needle_share": round(infusion.share, 4),
                    "boundary": infusion.boundary,
                    "needles": [n.to_json() for n in needles],
                    "placements": [[p.needle_id, p.start, p.end] for p in infusion.placements],
                    "decoys": [n.to_json() for n in decoys],
                    "needles_skipped": dict(sorted(skipped.items())),
                    "conflicts": conflicts,
                },
                max_tokens=opts.max_tokens,
            )
        )
    return {
        "items": [item.to_json() for item in items],
        "needle_set": {
            "sha256": chosen.sha256,
            "source": chosen.path,
            "header": chosen.header,
            "needles": len(chosen.needles),
        },
    }


def load_items(data_dir: Path | None, opts: MineaOptions = DEFAULTS) -> SuiteData:
    """Build the MINEA suite from ``data_dir/minea`` (or ``opts.documents``); the items
    are cached as derived data (:mod:`suites.derived_cache`), keyed by the documents, the
    options, the schema, the needle file and the code that builds them.

    Raises:
        DataMissing: the manifest is absent.
        DataError: a malformed manifest line, a missing haystack, a bad schema or needle
            file, an encoder asked for and not installed, or needles that cannot fill a
            haystack to ``min_share``.
    """
    try:
        encoder = resolve_encoder(opts.encoder)
    except ValueError as exc:
        raise DataError(str(exc)) from None
    haystacks, data_note = find_haystacks(data_dir, opts)
    schema = load_schema(opts.schema_file)
    texts = [read_text(path) for _, path, _ in haystacks]
    built = cached_json(
        "minea-items",
        _items_key(opts, schema, haystacks, texts),
        lambda: _build(opts, schema, haystacks, texts),
    )
    items = [Item.from_json(row) for row in built["items"]]
    notes = {
        "source": "MINEA: Assessing the quality of information extraction (NeurIPS 2024 submission)",
        "data": data_note,
        "needle_set": built["needle_set"],
        "schema": {"path": schema.path, "types": list(schema.types)},
        "options": {**dump_options(opts), "encoder": encoder},
        "prompts": "extraction, needle and judge prompts written after the paper's "
        "descriptions; the paper shows its prompts only as images (Figures 4, 6, 8)",
        "semantic_similarity": (
            f"mean of LSA cosine (scikit-learn) and embedding cosine of {MINILM}"
            if encoder == "minilm"
            else "mean of LSA cosine and TF-IDF cosine (scikit-learn); no sentence encoder"
        ),
        "matching": "n and ns compare after one normalisation (NFKC, case folded, punctuation "
        "as spaces, leading titles and trailing post-nominals of names removed); ns needs the "
        "name as whole words, so 'India' is not found in 'Indiana'",
        "needles_dealt": "no two needles of a document share more than one keyword; no needle "
        "name occurs in its document or another needle's paragraph (meta.needles_skipped, "
        "meta.conflicts)",
        "control": (
            "every document is also extracted without its needles; a criterion that fires "
            "there is a false positive: the needle does not count as found by it, and a "
            f"criterion whose control rate for a type exceeds {opts.max_control_fp} is not "
            "used for that type's MINEA"
            if opts.control
            else "off (minea.control=false): every criterion counts, as in the paper"
        ),
        "judge": "criterion llm only with a judge other than the model under test "
        "(--judge-model), unless minea.judge=self; minea/score_no_llm leaves llm out",
        "score": "minea/score is the mean over documents of each document's MINEA (the "
        "paper's rule on its needles); the pooled MINEA of the paper (maximum per type over "
        "all needles) is in the report",
        "relevance": {"metric": "METEOR without chunk penalty (nltk, gamma=0)"} | wordnet_status(),
    }
    return SuiteData(items=items, notes=notes)


# the suite declares this loader by name (suites.protocol.lazy): its type is checked here
LOADER: Loader[MineaOptions] = load_items
