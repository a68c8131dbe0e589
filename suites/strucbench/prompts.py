"""Struc-Bench inference prompts (Appendix E): instruction + text + format description.

For raw text the paper gives the model an example output first (models otherwise answer
in prose); HTML and LaTeX prompts name the content and format sections.
"""

from __future__ import annotations

__all__ = ["build_prompt", "instruction", "ONE_SHOT_RAW"]

ONE_SHOT_RAW = (
    "Example\n"
    "Text: Green Man is a family friendly pub near All Bar One.\n"
    "Format description: There is 1 table with 2 columns and 3 data rows below one header row. "
    'The column names, in order, are: "attribute", "value".\n'
    "Table:\n| attribute | value |\n|---|---|\n| name | Green Man |\n| eatType | pub |\n| near | All Bar One |\n"
)

_INSTRUCTIONS = {
    "raw": "Generate a table in raw text format from the text and the format description. "
    "The input has two parts: the text, and a description of the table's format. Output only the table.",
    "html": "Generate an HTML table from the content description and the format description below. "
    "Output only the HTML code of the table.",
    "latex": "Generate a LaTeX table from the content description and the format description below. "
    "Output only the LaTeX code of the table.",
}
_ANSWER_CUE = {"raw": "Table:\n", "html": "HTML:\n", "latex": "LaTeX:\n"}


def instruction(fmt: str) -> str:
    """The instruction that begins the prompt of format ``fmt``: the system-role text of
    a chat model (the paper instructed GPT-3.5/4; Appendix E)."""
    return _INSTRUCTIONS[fmt]


def build_prompt(fmt: str, text: str, format_description: str) -> str:
    """The prompt for format ``fmt`` (``raw``, ``html``, ``latex``).

    Args:
        text: the input text (raw: the human-written E2E text; HTML/LaTeX: the generated
            content description).
        format_description: see :func:`suites.strucbench.render.format_description`.
    """
    parts = [_INSTRUCTIONS[fmt]]
    if fmt == "raw":
        parts.append(ONE_SHOT_RAW)
        parts.append(f"Text: {text}\nFormat description: {format_description}\n{_ANSWER_CUE[fmt]}")
    else:
        parts.append(
            f"Content description:\n{text}\n\nFormat description:\n{format_description}\n\n{_ANSWER_CUE[fmt]}"
        )
    return "\n\n".join(parts)
