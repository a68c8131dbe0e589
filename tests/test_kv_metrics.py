"""The ``kv`` metrics as docs/suites/kv.md defines them, the team's prompt parts, and the
schema mode's scoring and constraint on a scripted model (no weights)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from extractbench.fixtures.models.fake.backend import ScriptedBackend
from extractbench.suites.kv.metrics import (
    MetricSettings,
    matches,
    normalize,
    parse_date,
    parse_number,
)
from extractbench.suites.kv.options import FDA_PROMPT
from extractbench.suites.model import Capabilities

S = MetricSettings()


@pytest.mark.parametrize(
    "metric, answer, value, expected",
    [
        ("contains", " Acme Ltd, Beta GmbH, Gamma SA", "beta gmbh", 1.0),  # a list of candidates
        ("exact", " Acme Ltd, Beta GmbH, Gamma SA", "Beta GmbH", 0.0),
        ("exact", " Beta GmbH ", "Beta GmbH", 1.0),
        ("exact", "beta gmbh", "Beta GmbH", 0.0),
        ("normalized", "BETA  GMBH.", "Beta GmbH", 1.0),
        ("normalized", "Ｂｅｔａ ＧｍｂＨ", "Beta GmbH", 1.0),  # full-width forms: NFKC
        ("normalized", "Straße", "STRASSE", 1.0),  # full case folding
        ("normalized", "Beta", "Beta GmbH", 0.0),
        ("fuzzy", "Harbor & Pine Web Services", "Harbor & Pine Web Services LLC", 1.0),
        ("fuzzy", "Harbor & Pine", "Harbor & Pine Web Services LLC", 0.0),
        ("number", "NOK 5 343.75 due", "5343.75", 1.0),
        ("number", "5 343.70", "5343.75", 0.0),
        ("number", "none", "5343.75", 0.0),
        ("date", "due 30 July 2025", "2025-07-30", 1.0),
        ("date", "07/30/2025", "July 30, 2025", 1.0),
        ("date", "July 2025", "2025-07-30", 0.0),  # no day: no date, never today's
    ],
)
def test_each_metric_decides_as_defined(metric, answer, value, expected):
    assert matches(answer, value, metric, S) == expected


def test_the_settings_change_what_matches():
    assert matches("Harbor & Pine", "Harbor & Pine Web Services LLC", "fuzzy",
                   MetricSettings(fuzzy_threshold=50)) == 1.0  # fmt: skip
    assert matches("100.4", "100", "number", MetricSettings(number_abs_tol=0.5)) == 1.0
    assert matches("101", "100", "number", MetricSettings(number_rel_tol=0.02)) == 1.0
    assert matches("103", "100", "number", MetricSettings(number_rel_tol=0.02)) == 0.0
    assert matches("1.854,40", "1854.40", "number", MetricSettings(decimal_separator=",")) == 0.0
    assert matches("1.854,40", "1854,40", "number", MetricSettings(decimal_separator=",")) == 1.0
    assert matches("03/04/2025", "2025-04-03", "date", MetricSettings(date_dayfirst=True)) == 1.0
    assert matches("03/04/2025", "2025-04-03", "date", S) == 0.0  # month first: March 4


@pytest.mark.parametrize(
    "text, separator, value",
    [
        ("1.854,40", ",", 1854.4), ("5 343.75", ".", 5343.75), ("1,854,400.5", ".", 1854400.5),
        ("962,71", ".", None), ("1.854,40", ".", None), ("-3.5 EUR", ".", -3.5),
        ("1.854,40", "auto", 1854.4), ("962,71", "auto", 962.71), ("1,854", "auto", 1854.0),
        ("$344.00", "auto", 344.0), ("5120/2025", ".", 5120.0), ("no number", "auto", None),
    ],
)  # fmt: skip
def test_numbers_are_read_with_their_separators(text, separator, value):
    assert parse_number(text, separator) == value


def test_iso_dates_are_never_read_day_first():
    assert parse_date("2025-05-08", dayfirst=True).isoformat() == "2025-05-08"
    assert parse_date("08.05.2025", dayfirst=True).isoformat() == "2025-05-08"


def test_normalize_is_squad_s_without_articles_plus_nfkc():
    assert normalize("  The  Ａcme, Inc.!  ") == "the acme inc"


def test_the_default_prompt_is_the_fda_prompt_and_a_template_keeps_the_document_in_the_prefix():
    from extractbench.suites.kv.items import prompt_parts

    assert FDA_PROMPT == "{chunk}\n{key}:"
    assert prompt_parts(FDA_PROMPT, "", "CHUNK {key}", "total") == ("CHUNK {key}\n", "total:")
    prefix, suffix = prompt_parts("Doc:\n{document}\nGive the {key}.\n{key}:", "Be brief.",
                                  "TEXT", "city")  # fmt: skip
    assert prefix == "Be brief.\n\nDoc:\nTEXT\nGive the " and suffix == "city.\ncity:"
    prefix, suffix = prompt_parts("Find {key} in:\n{chunk}\nAnswer:", "", "TEXT", "city")
    assert prefix == "" and suffix == "Find city in:\nTEXT\nAnswer:"


SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "total": {"type": "number"}},
    "required": ["id", "total"],
}


def _schema_options(tmp_path, **extra):
    from extractbench.suites.kv.suite import SUITE

    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    rows = [{"document": "Invoice A-1\ntotal 12.50\n", "expected": {"id": "A-1", "total": 12.5}}]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return SUITE, SUITE.parse_options(
        {"path": str(tmp_path / "items.jsonl"), "schema": str(tmp_path / "schema.json"), **extra}
    )


def test_schema_mode_decodes_under_the_schema_s_grammar_where_the_backend_honours_one(tmp_path):
    from extractbench.suites.protocol import Models

    suite, options = _schema_options(tmp_path)
    (item,) = suite.load(None, options).items
    assert item.grammar and 'root ::= "{"' in item.grammar  # llama.cpp's converter's grammar
    assert "maxLength" not in item.grammar and "{0,64}" not in json.dumps(SCHEMA)
    model = ScriptedBackend(lambda prompt: '{"id": "A-1", "total": 12.5}')
    model.capabilities = dataclasses.replace(model.capabilities, grammar=True)
    result = suite.run(item, Models(model, model), options)
    assert model.grammars == [item.grammar]
    assert result.details["constraint"] == "json-schema grammar"
    assert result.scores["accuracy"] == 1.0 and result.scores["schema_valid"] == 1.0
    plain = ScriptedBackend(lambda prompt: 'Sure! {"id": "A-1", "total": 1')  # cut off
    result = suite.run(item, Models(plain, plain), options)
    assert result.details["constraint"] == "none"
    assert result.scores["json_valid"] == 0.0 and result.details["missing"] == ["id", "total"]
    _, unconstrained = _schema_options(tmp_path, constrain="false")
    assert suite.load(None, unconstrained).items[0].grammar is None


def test_schema_mode_s_one_constraint_is_the_grammar_else_the_schema_else_none(tmp_path):
    from extractbench.fixtures.models.cache import call_key, generation_key
    from extractbench.suites.protocol import Models

    suite, options = _schema_options(tmp_path)
    (item,) = suite.load(None, options).items
    schema = json.loads(item.json_schema)  # the schema the grammar was made of: strings bounded
    assert schema["properties"]["id"]["maxLength"] > 0 and schema["required"] == ["id", "total"]
    decided = {}
    for grammar, schema_ok in [(True, True), (False, True), (False, False)]:
        model = ScriptedBackend(lambda prompt: '{"id": "A-1", "total": 12.5}')
        model.capabilities = Capabilities(grammar=grammar, json_schema=schema_ok)
        result = suite.run(item, Models(model, model), options)
        (asked,) = model.asked  # the backend gets both; it applies the one it honours
        assert asked["grammar"] == item.grammar and asked["json_schema"] == item.json_schema
        decided[grammar, schema_ok] = result.details["constraint"]
    assert decided == {
        (True, True): "json-schema grammar",
        (False, True): "response_format json_schema",
        (False, False): "none",
    }
    # the schema is part of the generation-cache key; a call without one keeps its old key
    request = item.request()
    without = dataclasses.replace(request, json_schema=None)
    assert call_key("fp", False, request) != call_key("fp", False, without)
    old = generation_key("fp", request.prompt, request.max_tokens, request.stop, item.grammar)
    assert call_key("fp", False, without) == old
    _, unconstrained = _schema_options(tmp_path, constrain="false")
    assert suite.load(None, unconstrained).items[0].json_schema is None


def test_schema_mode_bounds_strings_and_takes_its_budget_from_the_schema(tmp_path):
    from extractbench.suites.kv.schema import bounded, max_chars

    limited = bounded(SCHEMA, 10)
    assert (
        limited["properties"]["id"]["maxLength"] == 10
        and "maxLength" not in SCHEMA["properties"]["id"]
    )
    assert max_chars(limited) == 2 + (4 + 3 + 22) + (7 + 3 + 24)
    suite, options = _schema_options(tmp_path, schema_max_string=10)
    assert suite.load(None, options).items[0].max_tokens == max_chars(limited)
    assert Capabilities().grammar is False


@pytest.mark.parametrize(
    "values, message",
    [
        ({"metrics": '{"total": "nope"}'}, "kv.metrics="),
        ({"metrics": "total=number"}, 'must be a JSON object: {"KEY": "METRIC", ...}'),
        ({"metric": "regex"}, "kv.metric=regex: must be one of contains, exact, normalized"),
        ({"prompt": "{chunk} says:"}, "must hold {key} and {chunk} or {document}"),
    ],
)
def test_a_bad_protocol_option_is_one_line(values, message):
    from extractbench.suites.item import DataError
    from extractbench.suites.kv.suite import SUITE

    with pytest.raises(DataError) as info:
        SUITE.parse_options(values)
    assert message in str(info.value) and "\n" not in str(info.value)
    if "nope" in str(values):
        assert "'nope' is no metric; one of contains, exact" in str(info.value)
