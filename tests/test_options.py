"""Suite options: types follow the defaults, mistakes are one-line data errors."""

import pytest

from suites.item import DataError
from suites.options import merge_options

DEFAULTS = {"judge": True, "iterations": 3, "share": 0.1, "needles": None, "language": "en"}


def test_command_line_strings_take_their_default_types():
    got = merge_options(
        "s", {"judge": "off", "iterations": "5", "share": "0.25", "needles": "n.jsonl"}, DEFAULTS
    )
    assert got == {"judge": False, "iterations": 5, "share": 0.25, "needles": "n.jsonl",
                   "language": "en"}  # fmt: skip
    assert merge_options("s", {"judge": "yes"}, DEFAULTS)["judge"] is True
    assert merge_options("s", {"iterations": 2}, DEFAULTS)["iterations"] == 2


@pytest.mark.parametrize(
    "options, message",
    [
        ({"iteration": "2"}, "unknown s option.s. iteration; known: judge"),
        ({"iterations": "two"}, "s.iterations=two: must be int"),
        ({"share": "x"}, "s.share=x: must be float"),
    ],
)
def test_mistakes_name_the_option(options, message):
    with pytest.raises(DataError, match=message):
        merge_options("s", options, DEFAULTS)


def test_a_choice_outside_its_set_is_one_line_naming_the_choices():
    defaults = {"mode": "a"}
    assert merge_options("s", {"mode": "b"}, defaults, {"mode": ("a", "b")})["mode"] == "b"
    with pytest.raises(DataError, match=r"^s.mode=c: must be one of a, b$"):
        merge_options("s", {"mode": "c"}, defaults, {"mode": ("a", "b")})


@pytest.mark.parametrize(
    ("load", "key"),
    [("suites.tableqa.items", "tableqa.match"), ("suites.strucbench.items", "strucbench.hscore")],
)
def test_suite_choice_options_refuse_other_values(load, key):
    import importlib

    options = importlib.import_module(load)._options
    with pytest.raises(DataError, match=f"{key}=exact: must be one of"):
        options({key.split(".")[1]: "exact"})
