"""FDA suite: chunking, label reading, item building and the containment metric."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractbench.suites.fda.chunking import ChunkingError, chunk_spans
from extractbench.suites.fda.items import build_items, read_labels
from extractbench.suites.fda.metrics import containment
from extractbench.suites.item import DataError


class WordTokenizer:
    """Each word with its following whitespace is one token; non-ASCII chars are byte tokens."""

    name = "words"

    def pieces(self, text: str) -> list[bytes]:
        out: list[bytes] = []
        word = ""
        for ch in text:
            if ord(ch) > 127:
                if word:
                    out.append(word.encode())
                    word = ""
                out.extend(bytes([b]) for b in ch.encode("utf-8"))
                continue
            word += ch
            if ch.isspace():
                out.append(word.encode())
                word = ""
        if word:
            out.append(word.encode())
        return out


def test_chunks_cover_text_exactly_with_the_token_budget():
    text = " ".join(f"w{i}" for i in range(25))
    spans = chunk_spans(text, WordTokenizer(), chunk_tokens=10)
    assert [len(WordTokenizer().pieces(text[a:b])) for a, b in spans] == [10, 10, 5]
    assert "".join(text[a:b] for a, b in spans) == text
    assert spans[0][0] == 0 and spans[-1][1] == len(text)


def test_chunk_boundary_never_splits_a_character():
    text = "aa " * 3 + "é" + " bb" * 3  # é is two byte tokens: 3 words + 2 bytes
    spans = chunk_spans(text, WordTokenizer(), chunk_tokens=4)
    chunks = [text[a:b] for a, b in spans]
    assert "".join(chunks) == text
    assert all("\ufffd" not in c for c in chunks)
    assert any(c.startswith("é") for c in chunks)


def test_tokenizer_that_does_not_round_trip_is_an_error():
    class Lossy:
        name = "lossy"

        def pieces(self, text):
            return [text.lower().encode()]

    with pytest.raises(ChunkingError):
        chunk_spans("ABC", Lossy())


def test_gemma_tokenizer_round_trips_a_real_document(tmp_path):
    from extractbench.suites.fda.chunking import GemmaTokenizer
    from extractbench.suites.model_files import default_model_path

    tok = GemmaTokenizer(default_model_path(), "x")
    text = "A. 510(k) Number: k050029\nB. Purpose — ünïcödé 21 CFR 866.5600 $3 . 2 \\%$\n\n# H."
    assert b"".join(tok.pieces(text)) == text.encode()
    spans = chunk_spans(text * 40, tok, chunk_tokens=50)
    assert len(spans) > 3 and "".join((text * 40)[a:b] for a, b in spans) == text * 40


@pytest.mark.parametrize(
    ("prediction", "reference", "expected"),
    [
        (" Prognostix, Inc.", "Prognostix, Inc.", 1.0),
        (" PROGNOSTIX, INC. and more", "prognostix, inc.", 1.0),
        (" Prognostix Inc", "Prognostix, Inc.", 0.0),
        (" 21 CFR 866.5600", "21 CFR 866.5600 ", 1.0),
        (" 21 CFR 866X5600", "21 CFR 866.5600", 0.0),
        (" (a+b)", "(a+b)", 1.0),
        ("", "x", 0.0),
    ],
)
def test_containment_is_lm_eval_contains_score(prediction, reference, expected):
    assert containment(prediction, reference) == expected


def write_labels(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


GOOD = {"doc_id": "K1", "doc_file": "docs/K1.md", "key": "applicant", "value": "Acme"}


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({**GOOD, "value": ""}), "missing or empty field(s) value"),
        (json.dumps({"doc_id": "K1", "key": "x"}), "doc_file, value"),
        (json.dumps(GOOD), "duplicate label for K1 / applicant"),
    ],
)
def test_malformed_label_names_file_and_line(tmp_path, bad_line, message):
    path = write_labels(tmp_path / "labels.jsonl", [GOOD, bad_line])
    with pytest.raises(DataError) as err:
        read_labels(path)
    assert f"{path}:2:" in str(err.value) and message in str(err.value)


def test_items_use_first_chunk_holding_the_value_and_count_unmatched():
    text = "Applicant: Acme Corp\nPanel: 82\n" + "filler " * 10 + "Measurand: glucose"
    cut = text.index("filler")
    spans = {"K1": [(0, cut), (cut, len(text))]}
    labels = [
        {**GOOD, "value": "ACME corp"},
        {**GOOD, "key": "measurand", "value": "Glucose"},
        {**GOOD, "key": "panel", "value": "82"},
        {**GOOD, "key": "type of test", "value": "Panel: 82\nfiller"},  # spans the cut
    ]
    items, unmatched = build_items(labels, {"K1": text}, spans)
    assert [i.id for i in items] == [
        "fda/K1/c0/applicant",
        "fda/K1/c0/panel",
        "fda/K1/c1/measurand",
    ]
    assert items[0].prompt == text[:cut] + "\napplicant:"
    assert items[0].group == "fda/K1/c0" and items[0].max_tokens == 48 and items[0].stop == ("\n",)
    assert unmatched == ["K1/type of test"]
