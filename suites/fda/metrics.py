"""FDA metric: case-insensitive containment of the gold value in the generation."""

from __future__ import annotations

import re

__all__ = ["containment"]


def containment(prediction: str, reference: str) -> float:
    """1.0 when ``reference`` occurs in ``prediction`` ignoring case, else 0.0.

    Exactly lm-evaluation-harness's ``fda`` task (``lm_eval/tasks/fda/task.py``,
    ``contains_score``): ``re.search(re.escape(label), prediction, re.IGNORECASE)``; the
    task's accuracy is the mean over items (Arora et al. 2024, "Simple linear attention
    language models...", FDA task description). v1 of that task strips the target;
    so does this function.
    """
    label = reference.strip()
    return 1.0 if re.search(re.escape(label), prediction, re.IGNORECASE) else 0.0
