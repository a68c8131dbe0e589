"""The Table-QA article's own results, per model and subset, stored for comparison. Data.

Source: the IDP team's article (Habr, 2024), section
"Результаты" (Results), the results table (the article has no page numbers and one
results table). Values are exact match in percent as
printed (integers; the average to one decimal). ``gosts`` is the article's GOST
(technical-standard) subset, which is not available here.

The article's "Avg" column is the unweighted mean of its seven subset values (wiki,
gosts, syn1-syn5): Gemma-2-27B (63 + 67 + 79 + 51 + 33 + 73 + 43) / 7 = 58.43, printed
58.4. Our runs have no gost, so :func:`average_without_gost` gives the mean over the six
subsets both have, the only average that can be set beside ours.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["SOURCE", "SUBSETS", "RESULTS", "per_subset", "average", "average_without_gost"]

SOURCE = (
    "IDP team, Table-QA article (Habr, 2024), section 'Результаты', results table; exact match, %"
)
SUBSETS = ("wiki", "gosts", "syn1", "syn2", "syn3", "syn4", "syn5")

# model: (per subset in SUBSETS order, the printed Avg)
RESULTS: dict[str, tuple[tuple[int, ...], float]] = {
    "Gemma-2-27B": ((63, 67, 79, 51, 33, 73, 43), 58.4),
    "Qwen-2.5-32B": ((77, 80, 96, 78, 66, 95, 97), 84.1),
    "GigaChat-Pro": ((60, 57, 86, 45, 47, 99, 65), 65.6),
    "Llama-3.1-70B": ((73, 78, 96, 50, 33, 99, 97), 75.1),
    "Qwen-2.5-72B": ((78, 83, 95, 71, 59, 96, 96), 82.6),
    "Mistral-Large-2-123B": ((69, 78, 87, 59, 46, 92, 83), 73.4),
    "Llama-3.1-405B": ((82, 87, 97, 76, 54, 99, 98), 84.7),
    "GigaChat-Max": ((79, 89, 97, 53, 48, 99, 97), 80.3),
}


def per_subset(model: str) -> dict[str, int]:
    """The article's exact match (%) of ``model`` per subset.

    Raises:
        KeyError: a model the article does not report.
    """
    return dict(zip(SUBSETS, RESULTS[model][0], strict=True))


def average(values: Mapping[str, float]) -> float:
    """The article's "Avg": the unweighted mean of the subset values given."""
    return sum(values.values()) / len(values)


def average_without_gost(model: str) -> float:
    """The unweighted mean of ``model``'s six subsets other than gosts (wiki, syn1-syn5):
    the article's figure recomputed over the subsets this project has."""
    return average({k: v for k, v in per_subset(model).items() if k != "gosts"})
