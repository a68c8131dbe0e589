"""P-Score (GPTscore): an LLM judge scores content and structural similarity 0-10.

Prompt: Struc-Bench Appendix F (D.1), asked in both orders (prediction, reference) and
(reference, prediction), averaged over the orders that parsed (Struc-Bench
``gpt_score/table_gpt_scores.py`` L304-336 average over examples where both parsed; we
keep an item's score when both orders parse and count the failures otherwise).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from extractbench.suites import safe_json

__all__ = ["JUDGE_TEMPLATE", "JUDGE_GRAMMAR", "judge_prompt", "parse_judgment", "PScore", "combine"]

JUDGE_TEMPLATE = """We want to evaluate how similar the following tables/data structures are.

Table 1:

```
{input1}
```

Table 2:

```
{input2}
```

Based on the above, we wanted to determine if the above tables are similar. Ideally, they should have identical content and structure. Score the "content similarity" and "structural similarity" between 0 and 10.

- Content similarity: 10 if the contents of the table cells are identical, 0 if they are entirely different. If about 50% of the cells have the same data, the score should be 5.

- Structural similarity: 10 if the tables have the same structure (e.g. same column and rows with identical ordering, same alignment, etc) although text formatting differences can be ignored (e.g. colors, font).

Output a JSON object such as the following:

```json
{{
"content_similarity": ...
"structural_similarity": ...
}}
```

Think carefully, and then output the scores.
"""

# GBNF for backends that constrain decoding: exactly the JSON object, scores 0-10.
JUDGE_GRAMMAR = r"""root ::= "{" ws "\"content_similarity\":" ws num "," ws "\"structural_similarity\":" ws num ws "}"
num ::= ("10" | [0-9]) ("." [0-9])?
ws ::= [ \t\n]*
"""

_JSON_BLOCK = re.compile(r"\{[^{}]*\}", re.DOTALL)


def judge_prompt(input1: str, input2: str) -> str:
    """Appendix F's prompt with the two tables."""
    return JUDGE_TEMPLATE.format(input1=input1, input2=input2)


def parse_judgment(text: str) -> tuple[float, float] | None:
    """(content, structure) from the judge's answer: the last JSON object holding both
    keys with numbers in [0, 10]; None when there is none (a parse failure)."""
    for block in reversed(_JSON_BLOCK.findall(text)):
        try:
            data = safe_json.loads(block)
        except json.JSONDecodeError:
            continue
        if not isinstance(data, dict):
            continue
        c, s = data.get("content_similarity"), data.get("structural_similarity")
        if (
            isinstance(c, int | float)
            and isinstance(s, int | float)
            and 0 <= c <= 10
            and 0 <= s <= 10
        ):
            return float(c), float(s)
    return None


@dataclass(frozen=True)
class PScore:
    """Averaged judgments (0-10 each), or None when an order failed to parse.

    Attributes:
        content, structure: means over both orders; None when not both parsed.
        failures: how many of the two judgments could not be parsed (0-2).
    """

    content: float | None
    structure: float | None
    failures: int


def combine(first: tuple[float, float] | None, second: tuple[float, float] | None) -> PScore:
    """Average the two orders' judgments; missing unless both parsed."""
    failures = (first is None) + (second is None)
    if first is None or second is None:
        return PScore(None, None, failures)
    return PScore((first[0] + second[0]) / 2, (first[1] + second[1]) / 2, 0)
