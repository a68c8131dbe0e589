"""What the charts of a run share: matplotlib's pyplot without a display, and titles that fit
the figure they head."""

from __future__ import annotations

import textwrap
from typing import Any

__all__ = ["pyplot", "fit_title"]

# the width of an average character of matplotlib's default font (DejaVu Sans) as a share of
# its size in points: "0" is 0.64, "i" 0.28, a space 0.32; mixed text averages about 0.55
_CHAR_WIDTH = 0.6


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def fit_title(text: str, width_in: float, fontsize: float = 10.0) -> str:
    """``text`` wrapped at word boundaries so no line is wider than ``width_in`` inches at
    ``fontsize`` points; each of its own lines is wrapped on its own, a word longer than a
    line (a path) is broken.

    Args:
        text: the title, lines separated by ``\\n``.
        width_in: the width the title may take (a figure's or an axes' width), in inches.
        fontsize: the title's font size in points.
    """
    chars = max(16, int(width_in * 72 / (fontsize * _CHAR_WIDTH)))
    return "\n".join(textwrap.fill(line, chars) or line for line in text.split("\n"))
