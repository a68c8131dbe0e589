"""The FDA heading-residue rule (suites/fda/labels.py): on made-up labels, and on every label
and item of the real data (skipped only where the data is absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractbench.suites.fda.labels import apply_rule, changes_table, clean_label, residue

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
LABELS = SHARED / "fda" / "fda_kv_labels_derived.jsonl"
needs_data = pytest.mark.skipif(not LABELS.is_file(), reason="../shared/data not present")


@pytest.mark.parametrize(
    ("value", "kept"),
    [
        (
            "and 510(k) numbers: AL-5000 Sentech Korea Corp. k061922",
            "AL-5000 Sentech Korea Corp. k061922",
        ),
        (
            "and 510(k) number(s): Quanta Lite ACA IgA III (k953366)",
            "Quanta Lite ACA IgA III (k953366)",
        ),
        ("/Indications for Use:", None),
        ("/ Indication(s) for use:", None),
        ("s:", None),
        ("(s): Class II", "Class II"),
        ("and device history:", None),
        ("2. Predicate 510(k) number(s): k980528", None),
        ("k051087 B. Purpose for Submission:", "k051087"),
        ("K162673 B. Purpose for Submission: Clearance of New Device", "K162673"),
        ("Meter 3. Comparison with predicate:", "Meter"),
        ("x D. Type of Test: y", None),  # one character left
        # clean labels come back unchanged
        ("Class: II", "Class: II"),
        ("Diagnostica Stago Asserachrom IX:AG", "Diagnostica Stago Asserachrom IX:AG"),
        ("E. coli O157:H7 antigen", "E. coli O157:H7 antigen"),
        ("serum: total protein", "serum: total protein"),
        ("sand: yes", "sand: yes"),
        ("21 CFR 866.1645: Fully Automated", "21 CFR 866.1645: Fully Automated"),
        ("Assayed hematology parameters: WBC, RBC", "Assayed hematology parameters: WBC, RBC"),
        ("Oral fluid/urine", "Oral fluid/urine"),
    ],
)
def test_clean_label_removes_heading_text_and_keeps_values(value, kept):
    assert clean_label(value) == kept
    if kept is not None:
        assert residue(kept) is None


def test_residue_names_the_rule_broken():
    assert residue("and 510(k) number: X") == "own_heading_tail"
    assert residue("B. Purpose for Submission: X") == "other_heading"
    assert residue("K1 B. Purpose for Submission:") == "next_heading"
    assert residue("x") == "too_short"
    assert residue("Device history:") == "ends_with_colon"
    assert residue("AL-5000") is None


def test_apply_rule_counts_changed_and_dropped_labels_in_order():
    rows = [
        {"doc_id": "K1", "key": "a", "value": "and 510(k) number: X1"},
        {"doc_id": "K1", "key": "b", "value": "/Indications for Use:"},
        {"doc_id": "K2", "key": "a", "value": "Plain"},
    ]
    kept, summary = apply_rule(rows)
    assert [(r["doc_id"], r["key"], r["value"]) for r in kept] == [
        ("K1", "a", "X1"),
        ("K2", "a", "Plain"),
    ]
    assert summary["labels_read"] == 3 and summary["labels_kept"] == 2
    assert summary["changed"] == {"K1/a": ["and 510(k) number: X1", "X1"]}
    assert summary["dropped"] == {"K1/b": "/Indications for Use:"}
    assert rows[0]["value"] == "and 510(k) number: X1"  # the rows read are not modified


@needs_data
def test_no_real_label_keeps_heading_text_and_the_docs_list_every_change():
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 1612
    kept, summary = apply_rule(rows)
    assert [r for r in kept if residue(r["value"]) is not None] == []
    values = {(r["doc_id"], r["key"]): r["value"] for r in kept}
    assert values[("K083801", "predicate device name")] == "AL-5000 Sentech Korea Corp. k061922"
    assert ("K172944", "intended use") not in values
    assert summary["labels_kept"] == len(kept) == 1612 - len(summary["dropped"])
    page = (ROOT / "docs" / "suites" / "fda-label-changes.md").read_text(encoding="utf-8")
    assert changes_table(summary) in page
    counts = f"changes {len(summary['changed'])} and drops {len(summary['dropped'])}"
    assert counts in page and f"{len(kept):,} labels" in page


@needs_data
def test_every_real_fda_item_is_free_of_heading_text():
    pytest.importorskip("llama_cpp")  # the chunking tokenizer
    from extractbench.suites.fda.items import load_items

    data = load_items(SHARED)
    rule = data.notes["label_rule"]
    assert rule["labels_read"] == 1612
    assert len(data.items) == rule["labels_kept"] - len(data.missing_labels)
    assert [it.id for it in data.items if residue(it.reference) is not None] == []
    by_label = {(it.meta["doc_id"], it.meta["key"]): it.reference for it in data.items}
    assert by_label[("K083801", "predicate device name")] == "AL-5000 Sentech Korea Corp. k061922"
    assert ("K172944", "intended use") not in by_label
    assert "K172944/intended use" in rule["dropped"]
