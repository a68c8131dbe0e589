"""Files built by project code from upstream files (never downloaded as such).

- ``fda/fda_kv_labels_derived.jsonl``: silver key-value labels of the FDA 510(k) decision
  summaries, by the heading rule and document selection of ``docs/data.md#fda``.
- ``minea/haystacks_manifest.jsonl``: the MINEA haystack list (``docs/data.md#minea``).
- ``tableqa/tablebench/TableBench_DP_official_example_54.jsonl``: TableBench's official
  DP examples without the model's fields (``docs/data.md#tablebench``).

Each builder is deterministic: the same upstream bytes give the same output bytes (the
manifest pins their sha256, and the tests compare them with a verified copy).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from extractbench.suites import safe_json

__all__ = [
    "FDA_HEADINGS",
    "fda_labels",
    "select_fda_documents",
    "fda_labels_file",
    "minea_manifest_file",
    "tablebench_examples_file",
]

# Evaporate's FDA attributes and the heading each is read from (docs/data.md#fda), in
# the order labels are written. A heading may carry an enumerator ("A.", "3", "E."), a
# markdown "#", a plural "(s)" (or "s" where the documents use one) and no colon.
FDA_HEADINGS: tuple[tuple[str, str, bool], ...] = (
    ("510k number", r"510\(k\) Number", False),
    ("purpose for submission", r"Purpose for Submission", False),
    ("measurand", r"Measurand", True),
    ("type of test", r"Type of Test(?: or Tests Performed)?", False),
    ("applicant", r"Applicant", False),
    ("proprietary and established names", r"Proprietary and Established Names", False),
    ("regulation section", r"Regulation section", False),
    ("classification", r"Classification", False),
    ("product code", r"Product code", True),
    ("panel", r"Panel", False),
    ("predicate device name", r"Predicate device name", True),
    ("predicate 510k number", r"Predicate 510\(k\) number", True),
    ("indications for use", r"Indication\(s\) for use", False),
    ("intended use", r"Intended use", True),
)
# Evaporate FDA documents present in the upstream set (HazyResearch/evaporate demo.ipynb).
EVAPORATE_DOCUMENTS = ("K153137", "K151046", "K181525", "K151265", "K171641", "K182472", "K170974")
MAX_DOCUMENTS, MIN_LABELS, MAX_CHARS = 150, 9, 80_000
OLD_TEMPLATE = "A. 510(k) Number"
_NO_VALUE = re.compile(r"^(n/?a\.?|not applicable\.?)$|^(see|same as|refer to)\b", re.IGNORECASE)
_ARTEFACT = re.compile(r"[$<\\]")  # MinerU LaTeX and table markup


def _heading(pattern: str, plural_s: bool) -> re.Pattern[str]:
    plural = r"(?:\(s\)|s)?" if plural_s else r"(?:\(s\))?"
    return re.compile(
        r"^\s*(?:#+\s*)?(?:[A-Z0-9]{1,2}\.?\s*)?" + pattern + plural + r"\s*:?\s*(.*)$",
        re.IGNORECASE,
    )


_HEADINGS = tuple((key, _heading(p, s)) for key, p, s in FDA_HEADINGS)


def fda_labels(text: str) -> list[tuple[str, str]]:
    """(key, value) labels of one decision summary, in :data:`FDA_HEADINGS` order.

    The value is the rest of the heading's first line, or the next non-empty line when
    that is empty (unless it starts with ``#``, ends with ``:``, or repeats the heading:
    a section title above its item, when the next occurrence is taken). Kept only when
    2-150 characters, without ``$``, ``<`` or ``\\``, not "N/A"/"Not applicable"/
    "See ..."/"Same as ..."/"Refer to ...", and present case-insensitively in the
    whitespace-normalised text (so containment can be satisfied). Source:
    docs/data.md#fda.
    """
    lines = text.split("\n")
    normalised = " ".join(text.split()).lower()
    labels = []
    for key, heading in _HEADINGS:
        for i, line in enumerate(lines):
            match = heading.match(line)
            if not match:
                continue
            value = match.group(1).strip()
            if not value:
                following = next((x.strip() for x in lines[i + 1 :] if x.strip()), "")
                if heading.match(following):
                    continue
                value = "" if following.startswith("#") or following.endswith(":") else following
            value = " ".join(value.split())
            if (
                2 <= len(value) <= 150
                and not _ARTEFACT.search(value)
                and not _NO_VALUE.match(value)
                and value.lower() in normalised
            ):
                labels.append((key, value))
            break
    return labels


def select_fda_documents(texts: Mapping[str, str]) -> list[str]:
    """The documents labelled, by docs/data.md#fda: decision summaries in the old
    template (``A. 510(k) Number`` in the first 2,000 characters); the Evaporate
    documents present, then those with at least 9 labels and at most 80,000 characters
    in ascending SHA-1 of the K-number, up to 150.

    Args:
        texts: K-number -> document text.

    Returns:
        The chosen K-numbers, sorted.
    """
    old = {k: t for k, t in texts.items() if OLD_TEMPLATE in t[:2000]}
    chosen = [k for k in EVAPORATE_DOCUMENTS if k in old]
    rest = sorted(
        (
            k
            for k, t in old.items()
            if k not in chosen and len(t) <= MAX_CHARS and len(fda_labels(t)) >= MIN_LABELS
        ),
        key=lambda k: hashlib.sha1(k.encode()).hexdigest(),
    )
    return sorted(chosen + rest[: MAX_DOCUMENTS - len(chosen)])


def _jsonl(rows: Iterable[Mapping[str, object]]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")


def fda_labels_file(docs: Mapping[str, tuple[str, str]]) -> bytes:
    """The bytes of ``fda/fda_kv_labels_derived.jsonl``.

    Args:
        docs: K-number -> (panel, document text); documents live at
            ``fda/docs/<K-number>_REVIEW.md``.
    """
    rows = []
    for doc_id in select_fda_documents({k: text for k, (_, text) in docs.items()}):
        panel, text = docs[doc_id]
        for key, value in fda_labels(text):
            rows.append({"doc_id": doc_id, "doc_file": f"docs/{doc_id}_REVIEW.md",
                         "panel": panel, "key": key, "value": value})  # fmt: skip
    return _jsonl(rows)


def minea_manifest_file(docs: Mapping[str, tuple[str, str]]) -> bytes:
    """The bytes of ``minea/haystacks_manifest.jsonl``: one line per haystack, sorted by
    K-number, with its panel and length in characters.

    Args:
        docs: K-number -> (panel, document text); haystacks live at
            ``minea/haystacks/<K-number>.md``.
    """
    return _jsonl(
        {"doc_id": k, "file": f"haystacks/{k}.md", "panel": docs[k][0], "chars": len(docs[k][1])}
        for k in sorted(docs)
    )


def tablebench_examples_file(upstream: bytes) -> bytes:
    """TableBench's official DP example file without ``model_name`` and ``prediction``."""
    rows = []
    for line in upstream.decode("utf-8").splitlines():
        if line.strip():
            row = safe_json.loads(line)
            rows.append({k: v for k, v in row.items() if k not in ("model_name", "prediction")})
    return _jsonl(rows)


def read_docs(folder: Path, pattern: str, panels: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """K-number -> (panel, text) for the files ``folder/pattern`` named in ``panels``."""
    out = {}
    for doc_id, panel in panels.items():
        out[doc_id] = (panel, (folder / pattern.format(doc_id)).read_text(encoding="utf-8"))
    return out
