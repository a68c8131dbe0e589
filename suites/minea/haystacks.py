"""MINEA's haystacks: the data folder's 53 FDA documents (its manifest), or a user's
``minea.documents`` folder, each file kept inside that folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from extractbench.suites.derived_cache import digest_of
from extractbench.suites.files import UserFiles, data_file, distinct_ids, inside, read_text
from extractbench.suites.item import DataError, DataMissing
from extractbench.suites.jsonl import iter_jsonl
from extractbench.suites.links import docs_url
from extractbench.suites.minea.options import MineaOptions

__all__ = ["MANIFEST", "find_haystacks"]

MANIFEST = "minea/haystacks_manifest.jsonl"


def find_haystacks(
    data_dir: Path | None, opts: MineaOptions
) -> tuple[list[tuple[str, Path, str]], str | dict[str, Any]]:
    """The haystacks as (doc_id, path, panel): the data folder's manifest, or every ``.txt``
    and ``.md`` file under the user's ``documents`` folder (doc_id: its path there without
    the suffix); and what the record says of them.

    Raises:
        DataMissing: no manifest in the data folder.
        DataError: a manifest line lacks a field or leaves the folder; ``documents`` is not
            a folder or holds no such file; a document a link leads out of the folder (or
            ``minea.root``), or over ``minea.max_file_mb``.
    """
    documents = opts.documents
    if documents is not None:
        folder = Path(documents).expanduser()
        if not folder.is_dir():
            raise DataError(f"minea.documents={documents}: no such folder")
        files = sorted(
            p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in (".txt", ".md")
        )
        if not files:
            raise DataError(f"minea.documents={documents}: no .txt or .md document in it")
        limits = UserFiles.of(opts, "minea", folder)
        for p in files:
            limits.path(p.relative_to(folder), f"minea.documents={documents}")
            limits.check_size(p)
        found = [("_".join(p.relative_to(folder).with_suffix("").as_posix().split()), p, "")
                 for p in files]  # fmt: skip
        distinct_ids(
            [(doc_id, p) for doc_id, p, _ in found], f"minea.documents={documents}", folder
        )
        # read_text: an unreadable or non-UTF-8 file is one DataError naming it
        digest = digest_of(part for doc_id, p, _ in found for part in (doc_id, read_text(p)))
        return found, {"documents": str(folder.resolve()), "files": len(found), "sha256": digest}
    if data_dir is None:
        raise DataMissing(
            f"no data folder and no minea.documents (see {docs_url('docs/data.md#minea')})"
        )
    manifest = data_file(data_dir, MANIFEST)
    if not manifest.is_file():
        raise DataMissing(f"{manifest} not found (see {docs_url('docs/data.md#minea')})")
    found = []
    for lineno, row in iter_jsonl(manifest):
        try:
            doc_id, rel, panel = str(row["doc_id"]), str(row["file"]), str(row.get("panel", ""))
        except KeyError as exc:
            raise DataError(f"{manifest}:{lineno}: lacks {exc}") from None
        path = inside(
            manifest.parent.parent,
            str(Path(manifest.parent.name) / rel),
            f"{manifest}:{lineno}: file",
        )
        found.append((doc_id, path, panel))
    note = ("53 public FDA 510(k) documents as haystacks (docs/data.md#minea), substituting "
            "for the paper's internal business documents")  # fmt: skip
    return found, note
