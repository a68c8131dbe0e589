"""Suite options: one parser into each suite's typed Options; mistakes are one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from pydantic import Field, ValidationError, model_validator

from extractbench.suites.item import DataError
from extractbench.suites.suite_options import NoOptions, SuiteOptions, parse_options


class Opts(SuiteOptions):
    judge: bool = True
    iterations: int = Field(3, ge=0)
    share: float = 0.1
    needles: str | None = None
    mode: Literal["a", "b"] = "a"
    low: int = 0

    @model_validator(mode="after")
    def _ordered(self) -> Opts:
        if self.low > self.iterations:
            raise ValueError(f"low={self.low} > iterations={self.iterations}")
        return self


def test_command_line_strings_take_their_field_types():
    got = parse_options(
        "s", Opts, {"judge": "off", "iterations": "5", "share": "0.25", "needles": "n.jsonl"}
    )
    assert got == Opts(judge=False, iterations=5, share=0.25, needles="n.jsonl")
    assert parse_options("s", Opts, {"judge": "yes"}).judge is True
    assert parse_options("s", Opts, {"iterations": 2}).iterations == 2  # a TOML integer
    assert parse_options("s", Opts, None) == Opts()
    assert parse_options("s", Opts, got) is got


@pytest.mark.parametrize(
    "options, message",
    [
        (
            {"iteration": "2"},
            r"^unknown s option\(s\) iteration \(did you mean 'iterations'\?\); known: judge, "
            r"iterations, share, needles, mode, low$",
        ),
        ({"iterations": "two"}, r"^s.iterations=two: must be int$"),
        (
            {"judge": "flase"},
            r"^s.judge=flase: must be true or false \(also 1/0, yes/no, on/off\)$",
        ),
        ({"judge": ""}, r"^s.judge=: must be true or false"),
        ({"share": "x"}, r"^s.share=x: must be float$"),
        ({"mode": "c"}, r"^s.mode=c: must be one of a, b$"),
        ({"iterations": "-1"}, r"^s.iterations=-1: must be >= 0$"),
        ({"iterations": "2.5"}, r"^s.iterations=2.5: must be int$"),
        ({"low": "4"}, r"^s options: low=4 > iterations=3$"),
    ],
)
def test_mistakes_name_the_option_and_the_valid_ones(options, message):
    with pytest.raises(DataError, match=message):
        parse_options("s", Opts, options)


def test_a_suite_without_options_says_so():
    with pytest.raises(DataError, match=r"known: none \(the s suite takes no options\)"):
        parse_options("s", NoOptions, {"x": "1"})


@pytest.mark.parametrize(("suite", "key"), [("tableqa", "match"), ("strucbench", "hscore")])
def test_suite_choice_options_refuse_other_values(suite, key):
    from extractbench.suites.registry import Registry

    with pytest.raises(DataError, match=f"{suite}.{key}=exact: must be one of"):
        Registry.installed().get(suite).parse_options({key: "exact"})


def test_every_installed_suite_option_says_what_it_is():
    """``extractbench suites`` and the docs' tables show each option's meaning: a field
    without ``Field(description=...)`` would be listed blank."""
    from extractbench.suites.registry import Registry
    from extractbench.suites.suite_options import describe_options

    blank = [
        f"{suite.name}.{row['name']}"
        for suite in Registry.installed().suites.values()
        for row in describe_options(suite.options)
        if not row["description"]
    ]
    assert blank == []


def test_options_are_described_with_their_type_range_and_default():
    from extractbench.suites.minea.options import MineaOptions
    from extractbench.suites.suite_options import describe_options, dump_options

    rows = {row["name"]: row for row in describe_options(MineaOptions)}
    assert rows["iterations"]["type"] == "int" and rows["iterations"]["range"] == ">= 0"
    assert rows["max_control_fp"]["range"] == ">= 0, <= 1"
    assert rows["judge"]["type"] == "auto | self | off" and rows["judge"]["default"] == "auto"
    assert rows["schema"]["type"] == "path | None"  # the option's name, not the field's
    parsed = parse_options("minea", MineaOptions, {"schema": "s.json", "iterations": "1"})
    assert parsed.schema_file == Path("s.json")
    assert dump_options(parsed)["schema"] == "s.json" and dump_options(parsed)["iterations"] == 1
    with pytest.raises(ValidationError, match="frozen"):  # a run cannot change them midway
        parsed.iterations = 2  # type: ignore[misc]


class FileOpts(SuiteOptions):
    folder: Path | None = None
    required: Path = Path("default.txt")


def test_a_path_option_takes_the_text_as_given_and_empty_text_unsets_it():
    """A relative path stays relative (its reader resolves it from the folder pytest runs
    in), ``~`` stays for the reader to expand, and ``folder=`` clears a config file's value;
    the record gets the path as text."""
    from extractbench.suites.suite_options import dump_options

    got = parse_options("s", FileOpts, {"folder": "tables/mine", "required": "~/a.txt"})
    assert got.folder == Path("tables/mine") and got.required == Path("~/a.txt")
    assert dump_options(got) == {"folder": "tables/mine", "required": "~/a.txt"}
    assert parse_options("s", FileOpts, {"folder": ""}).folder is None
    with pytest.raises(DataError, match=r"^s.folder=3: must be path$"):
        parse_options("s", FileOpts, {"folder": 3})  # a TOML integer


def test_uses_data_dir_is_true_unless_the_options_name_data_elsewhere():
    from extractbench.suites.registry import Registry

    suites = Registry.installed()
    assert FileOpts().uses_data_dir and NoOptions().uses_data_dir
    cases = [("fda", {"source": "based-fda"}), ("tablebench", {"source": "hub"}),
             ("tableqa", {"tables": "t"}), ("minea", {"documents": "d"}),
             ("strucbench", {"pairs": "p.jsonl"})]  # fmt: skip
    for name, values in cases:
        suite = suites.get(name)
        assert suite.parse_options().uses_data_dir and suite.reads_local_data({})
        assert not suite.parse_options(values).uses_data_dir, name
        assert not suite.reads_local_data(values) and suite.missing_data(None, values) == []


def test_a_suite_refuses_another_suites_options():
    from extractbench.suites.registry import Registry

    suites = Registry.installed()
    parsed = suites.get("tableqa").parse_options({"per_cell": "2"})
    assert suites.get("tableqa").parse_options(parsed) is parsed
    with pytest.raises(TypeError, match="TableQAOptions, not FdaOptions"):
        suites.get("fda").parse_options(parsed)
