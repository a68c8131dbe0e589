"""Struc-Bench as a Suite: text-to-table in raw text, HTML and LaTeX; H-Score, P-Score,
text metrics and error counts (Tang et al. 2023, Struc-Bench, Sections 3-4)."""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import Field

from extractbench.suites.item import Item
from extractbench.suites.links import docs_url
from extractbench.suites.protocol import ItemResult, Models, Suite, generate, lazy
from extractbench.suites.strucbench.hscore import HScoreMode
from extractbench.suites.suite_options import UserFileOptions

__all__ = ["HScoreMode", "StrucbenchOptions", "SUITE", "JUDGE_MAX_TOKENS"]

# reference: the Struc-Bench scripts' H-Score (default); corrected: with
# suites.strucbench.hscore.CORRECTIONS; both: both, the corrected ones named *_corrected
JUDGE_MAX_TOKENS = 256


class StrucbenchOptions(UserFileOptions):
    """``--suite-option strucbench.KEY=VALUE``."""

    pscore: bool = Field(default=True, description="judge each item (P-Score: two judge calls per item)")
    max_cells: int = Field(
        default=60, ge=1, description=("leave out gold tables with more cells (CPU generation budget)")
    )
    hscore: HScoreMode = Field(
        default="reference", description=("which H-Score: reference (the paper's scripts), corrected, both")
    )
    bertscore: str = Field(
        default="auto",
        description=(
            "BERTScore's encoder: auto (the minilm extra's all-MiniLM-L6-v2 when installed, else "
            "not computed), minilm (required), a local model folder (required) or off"
        ),
    )
    bertscore_layer: int | None = Field(
        default=None, ge=1, description=("the encoder layer BERTScore compares (default: its last)")
    )
    pairs: Path | None = Field(
        default=None,
        description=(
            "a JSON Lines file of the user's own (text, gold table) pairs: the items, instead of "
            f"the data folder's ({docs_url('docs/suites/strucbench.md')})"
        ),
    )

    @property
    def uses_data_dir(self) -> bool:
        """Whether the items come from the data folder (not ``strucbench.pairs``)."""
        return self.pairs is None


def run(item: Item, models: Models, options: StrucbenchOptions) -> ItemResult:
    """Generate the table; score H-Score (``options.hscore``), SacreBLEU, ROUGE-L,
    BERTScore (``options.bertscore``), METEOR (:mod:`suites.meteor`, where WordNet is
    installed), the error counts, and with ``options.pscore``
    the P-Score from two judge calls (prediction vs gold, gold vs prediction).

    Raises:
        DataError: BERTScore asked for with an encoder that is missing.
        ModelError: from the backend.
    """
    from extractbench.suites.meteor import meteor
    from extractbench.suites.strucbench.bertscore import bertscore_f1, resolve_encoder
    from extractbench.suites.strucbench.metrics import table_metrics
    from extractbench.suites.strucbench.pscore import (
        JUDGE_GRAMMAR,
        combine,
        judge_prompt,
        parse_judgment,
    )

    fmt = item.meta["format"]
    generation = generate(item, models.model)
    prediction = generation.text
    metrics = table_metrics(fmt, prediction, item.reference, options.hscore)
    result = ItemResult({f"{fmt}/{name}": value for name, value in metrics.scores.items()})
    result.generation = generation
    encoder = resolve_encoder(options.bertscore, options.bertscore_layer)
    if encoder is not None:
        result.scores[f"{fmt}/bertscore"] = bertscore_f1(prediction, item.reference, encoder)
    value = meteor(item.reference, prediction)  # None: no WordNet installed
    if value is not None:
        result.scores[f"{fmt}/meteor"] = value
    result.details["error_counts"] = metrics.error_counts
    result.details["parse_error"] = metrics.parse_error
    if metrics.hscore_components:
        result.details["hscore_components"] = metrics.hscore_components
    if metrics.hscore_unscorable:
        result.details["hscore_unscorable"] = metrics.hscore_unscorable
    if options.pscore:
        result.details["self_judged"] = models.judge is models.model  # no --judge-model
        judgments = [
            parse_judgment(
                models.judge.generate(
                    judge_prompt(a, b), max_tokens=JUDGE_MAX_TOKENS, grammar=JUDGE_GRAMMAR
                ).text
            )
            for a, b in ((prediction, item.reference), (item.reference, prediction))
        ]
        p = combine(*judgments)
        result.scores[f"{fmt}/p_content"] = p.content
        result.scores[f"{fmt}/p_structure"] = p.structure
        result.scores["pscore_parse_failures"] = float(p.failures)
    return result


def metrics() -> tuple[str, ...]:
    """Every metric name Struc-Bench records (per format, plus the judge's failures)."""
    from extractbench.suites.strucbench.errors import ERROR_TYPES
    from extractbench.suites.strucbench.metrics import H_NAMES

    per_format = [
        *H_NAMES, *(f"{name}_corrected" for name in H_NAMES), "sacrebleu", "bertscore",
        "rouge_l", "meteor", "parse_error", "p_content", "p_structure",
        *(f"error_{kind}" for kind in ERROR_TYPES),
    ]  # fmt: skip
    return (*(f"{fmt}/{name}" for fmt in ("raw", "html", "latex") for name in per_format),
            "pscore_parse_failures")  # fmt: skip


SUITE = Suite(
    name="strucbench",
    version=1,  # raised by one when a change makes its scores incomparable with earlier runs
    folder=Path(__file__).resolve().parent,
    test="test_strucbench.py::test_strucbench",
    load=lazy("extractbench.suites.strucbench.items:load_items", StrucbenchOptions),
    run=run,
    options=StrucbenchOptions,
    breakdown=("format", "source"),
    metrics=metrics,
    data=(
        "strucbench/e2e/test-fixed.csv",
        "strucbench/scigen/test-CL.json",
        "strucbench/scigen/test-Other.json",
    ),
    data_source="docs/data.md#strucbench",
    prefetch=True,
    ranges=(  # the paper's scales (reference H-Score similarities are not clamped at 0)
        ("*/h_*_norm*", -math.inf, 1.0),
        ("*/h_*", -math.inf, 4.0),
        ("*/sacrebleu", 0.0, 100.0),
        ("*/bertscore", -1.0, 1.0),
        ("*/meteor", 0.0, 1.0),
        ("*/p_content", 0.0, 10.0),
        ("*/p_structure", 0.0, 10.0),
        ("*/error_*", 0.0, math.inf),
        ("pscore_parse_failures", 0.0, math.inf),
    ),  # fmt: skip
    judged=("*/p_content", "*/p_structure", "pscore_parse_failures"),
)
