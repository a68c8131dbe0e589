"""Suite options: one parser into each suite's typed Options; mistakes are one-line errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import pytest
from extractbench.suites.item import DataError
from extractbench.suites.options import NoOptions, parse_options


@dataclass(frozen=True)
class Opts:
    judge: bool = True
    iterations: int = 3
    share: float = 0.1
    needles: str | None = None
    mode: Literal["a", "b"] = "a"

    def __post_init__(self) -> None:
        if self.iterations < 0:
            raise ValueError(f"iterations={self.iterations}: must be >= 0")


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
            r"^unknown s option\(s\) iteration; known: judge, iterations, share, needles, mode$",
        ),
        ({"iterations": "two"}, r"^s.iterations=two: must be int$"),
        (
            {"judge": "flase"},
            r"^s.judge=flase: must be true or false \(also 1/0, yes/no, on/off\)$",
        ),
        ({"judge": ""}, r"^s.judge=: must be true or false"),
        ({"share": "x"}, r"^s.share=x: must be float$"),
        ({"mode": "c"}, r"^s.mode=c: must be one of a, b$"),
        ({"iterations": "-1"}, r"^s options: iterations=-1: must be >= 0$"),
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
