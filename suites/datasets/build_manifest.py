"""Write ``manifest.json`` from a verified local copy of the data (maintainers only).

    python -m suites.datasets.build_manifest DATA_DIR

The upstream repository, commit and path of every file follow ``docs/data.md``; the
sha256 and size come from the files themselves. Run it when the pinned data changes,
and review the diff like code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from extractbench.suites import safe_json
from extractbench.suites.datasets.manifest import MANIFEST_PATH
from extractbench.suites.files import sha256_of

VERSION = "2026.11.1"
SOURCES: dict[str, dict[str, str]] = {
    "adlm": {
        "repository": "myADLM/ADLM-2025-Data-Challenge",
        "commit": "786bdd37321a338db8419d2d47df3cd792a9b0ab",
        "license": "U.S. FDA documents: U.S. government works, public domain in the U.S. "
        "(17 U.S.C. 105); Markdown conversion by the repository's team (no license file)",
    },
    "e2e-cleaning": {
        "repository": "tuetschek/e2e-cleaning",
        "commit": "164acdf986146d76f18893b3de9488725deda4c2",
        "license": "E2E NLG data, CC BY-SA 4.0 (cleaned version; no license stated in the repository)",
    },
    "scigen": {
        "repository": "UKPLab/SciGen",
        "commit": "e4c169d910c076bbe5fd2e90e7c809d8ae2f7227",
        "license": "CC BY-NC-SA 4.0 (non-commercial use only)",
    },
    "wtq": {
        "repository": "ppasupat/WikiTableQuestions",
        "commit": "7d455a5a707b96341ef72aff9428749d443d8aa9",
        "license": "CC BY-SA 4.0 (Wikipedia tables, Pasupat and Liang 2015)",
    },
    "tablebench": {
        "repository": "TableBench/TableBench",
        "commit": "6c61a20340409dea8f96edb8675e66bb4abd7b28",
        "license": "TableBench data: Apache-2.0",
    },
    "tablebench-copy": {
        "repository": "yilinwu123/summarization",
        "commit": "87d13e62546148a37544ce4745bc009a92733e20",
        "license": "TableBench data: Apache-2.0 (third-party copy; that repository has no license file)",
    },
}
ADLM_DIR = "northwell-informatics/LabDocs/fda_extracted_mds"


def _url(source: str, upstream: str) -> str:
    s = SOURCES[source]
    return f"https://raw.githubusercontent.com/{s['repository']}/{s['commit']}/{quote(upstream)}"


def _entry(
    data: Path, rel: str, source: str, upstream: str, build: str | None = None
) -> dict[str, Any]:
    path = data / rel
    entry: dict[str, Any] = {
        "sha256": sha256_of(path), "size": path.stat().st_size, "source": source,
        "upstream": upstream, "url": _url(source, upstream),
    }  # fmt: skip
    if build:
        entry["build"] = build
    return entry


def _panels(path: Path) -> dict[str, str]:
    rows = [safe_json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return {r["doc_id"]: r["panel"] for r in rows}


def _documents(data: Path, index: str, local: str, upstream: str, build: str) -> dict[str, Any]:
    """The ADLM documents named by ``index`` (a JSONL file with ``doc_id`` and ``panel``,
    built by ``build``) and the index itself."""
    files = {}
    for doc_id, panel in sorted(_panels(data / index).items()):
        rel = local.format(doc_id)
        files[rel] = _entry(data, rel, "adlm", f"{ADLM_DIR}/{panel}/{upstream.format(doc_id)}")
    files[index] = _entry(data, index, "adlm", ADLM_DIR, build)
    return files


def build_manifest(data: Path) -> dict[str, Any]:
    """The manifest of the data under ``data`` (laid out as ``docs/data.md`` describes)."""
    suites: dict[str, dict[str, Any]] = {
        "fda": _documents(data, "fda/fda_kv_labels_derived.jsonl", "fda/docs/{}_REVIEW.md",
                          "{}_REVIEW.md", "fda-labels"),
        "minea": _documents(data, "minea/haystacks_manifest.jsonl", "minea/haystacks/{}.md",
                            "{}.md", "minea-manifest"),
    }  # fmt: skip
    wtq = {}
    for path in sorted((data / "tableqa/wtq/csv").glob("*/*")):
        if path.suffix in (".html", ".csv"):
            rel = path.relative_to(data).as_posix()
            wtq[rel] = _entry(data, rel, "wtq", rel.removeprefix("tableqa/wtq/"))
    suites["tableqa"] = wtq
    struc = {
        "strucbench/e2e/test-fixed.csv": _entry(
            data, "strucbench/e2e/test-fixed.csv", "e2e-cleaning", "cleaned-data/test-fixed.csv"
        ),
    }
    for name in ("test-CL.json", "test-Other.json"):
        rel = f"strucbench/scigen/{name}"
        struc[rel] = _entry(data, rel, "scigen", f"dataset/test/{name}")
    struc.update({p: e for p, e in wtq.items() if p.endswith(".html")})  # HTML gold tables
    suites["strucbench"] = struc
    suites["tablebench"] = {
        "tableqa/tablebench/TableBench_test_886.jsonl": _entry(
            data, "tableqa/tablebench/TableBench_test_886.jsonl", "tablebench-copy",
            "TableBench.jsonl",
        ),
        "tableqa/tablebench/TableBench_DP_official_example_54.jsonl": _entry(
            data, "tableqa/tablebench/TableBench_DP_official_example_54.jsonl", "tablebench",
            "eval_examples/inference_results/o3-mini-2025-01-31=TableBench_DP=Example.jsonl",
            "tablebench-examples",
        ),
    }  # fmt: skip
    return {"version": VERSION, "sources": SOURCES, "suites": suites}


def main(argv: list[str] | None = None) -> int:
    """Write the manifest of the data folder given as the only argument."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not Path(args[0]).is_dir():
        print("usage: python -m suites.datasets.build_manifest DATA_DIR", file=sys.stderr)
        return 2
    manifest = build_manifest(Path(args[0]))
    MANIFEST_PATH.write_text(
        json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    count = sum(len(f) for f in manifest["suites"].values())
    print(f"wrote {MANIFEST_PATH}: {count} entries in {len(manifest['suites'])} suites")
    return 0


if __name__ == "__main__":
    sys.exit(main())
