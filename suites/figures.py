"""What the charts of a run share: matplotlib's pyplot without a display, and titles that fit
the figure they head."""

from __future__ import annotations

import textwrap
from typing import Any

__all__ = ["pyplot", "fit_title", "cell_text_colour"]

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


def cell_text_colour(rgba: tuple[float, ...]) -> str:
    """``"white"`` or ``"black"``: the text colour that reads best on a cell of colour
    ``rgba`` (components in [0, 1], as a matplotlib colormap returns them).

    The cell's relative luminance L is WCAG 2.x's (sRGB components linearised, weighted
    0.2126 R + 0.7152 G + 0.0722 B); black text's contrast ratio (L + 0.05) / 0.05 and
    white text's 1.05 / (L + 0.05) are equal at L = 0.179, so a darker cell gets white text.
    """

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgba[:3])
    luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "white" if luminance < 0.179 else "black"
