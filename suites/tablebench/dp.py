"""TableBench (Wu et al. 2025): its DP prompts, its answer extraction, its files.

Prompts are TableBench's own "DP" (direct prompting) instructions, one per question
subtype, read from the official 54 examples (``TableBench_DP_official_example_54.jsonl``:
each instruction with its table and question replaced by placeholders). Answers are the
text after the last ``Final Answer:``. Metrics as TableBench scores them: exact match for
FactChecking and NumericalReasoning, ROUGE-L for DataAnalysis. Visualization questions
(chart code, scored by executing it) are skipped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from extractbench.suites.item import DataError
from extractbench.suites.jsonl import iter_jsonl

__all__ = [
    "TEST_FILE",
    "EXAMPLES_FILE",
    "SKIPPED_QTYPES",
    "read_jsonl",
    "dp_templates",
    "final_answer",
]

TEST_FILE = "tableqa/tablebench/TableBench_test_886.jsonl"
EXAMPLES_FILE = "tableqa/tablebench/TableBench_DP_official_example_54.jsonl"
SKIPPED_QTYPES = ("Visualization",)
_FINAL = re.compile(r"Final Answer:\s*(.*)", re.IGNORECASE)


def read_jsonl(path: Path, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    """JSON objects, one per line, each with ``fields``.

    Raises:
        DataError: a line is not a JSON object holding every field (``file:line``).
    """
    rows = []
    for lineno, row in iter_jsonl(path):
        if any(f not in row for f in fields):
            raise DataError(f"{path}:{lineno}: expected a JSON object with {', '.join(fields)}")
        rows.append(row)
    return rows


def dp_templates(examples: list[dict[str, Any]]) -> dict[str, str]:
    """qsubtype -> DP instruction template with ``{table}`` and ``{question}`` placeholders.

    The official instruction embeds the table as Python's ``str()`` of the table dict;
    the template is recovered by replacing that text and the question. Braces of the
    instruction text are escaped for :meth:`str.format`.
    """
    templates: dict[str, str] = {}
    for row in examples:
        text = row["instruction"].replace("{", "{{").replace("}", "}}")
        table = str(row["table"]).replace("{", "{{").replace("}", "}}")
        question = row["question"].replace("{", "{{").replace("}", "}}")
        templates.setdefault(
            row["qsubtype"], text.replace(table, "{table}").replace(question, "{question}")
        )
    return templates


def final_answer(generation: str) -> str:
    """The text after the last ``Final Answer:`` (TableBench's parser); the whole text if none."""
    matches = _FINAL.findall(generation)
    return matches[-1].strip() if matches else generation.strip()
