"""MINEA's options: ``[tool.extractbench.options.minea]`` and ``--suite-option
minea.KEY=VALUE``, the paper's settings as defaults (MINEA Sections 4-5)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, model_validator

from extractbench.suites.suite_options import UserFileOptions

__all__ = ["MineaOptions"]


class MineaOptions(UserFileOptions):
    """``--suite-option minea.KEY=VALUE`` (the paper's settings as defaults)."""

    documents: Path | None = Field(
        default=None,
        description=(
            "a folder of the user's own documents (*.txt and *.md, UTF-8, its subfolders too) as "
            "the haystacks; unset: the data folder's documents"
        ),
    )
    needles: Path | None = Field(
        default=None,
        description=("needle-set JSONL (extractbench needles); unset: the template set of seed"),
    )
    schema_file: Path | None = Field(
        default=None, alias="schema", description=("schema JSON; unset: suites/minea/schema.json")
    )
    seed: int = Field(
        default=0, description="the seed of the template needles, their placement and the decoys"
    )
    per_type: int = Field(
        default=50, ge=1, description=("template needles per schema type (53 documents take about 670)")
    )
    min_share: float = Field(
        default=0.10, gt=0, lt=1, description=("smallest needle share of an enriched text (paper: 10-30%)")
    )
    max_share: float = Field(default=0.30, gt=0, lt=1, description="largest needle share")
    iterations: int = Field(
        default=3, ge=0, description=("further calls per piece after the first (paper Section 5.1: 3)")
    )
    piece_chars: int = Field(default=4000, ge=1, description="piece size in characters")
    max_tokens: int = Field(default=384, ge=1, description="generation budget per extraction call")
    context_tokens: int = Field(
        default=4096, ge=1, description=("the window the extraction thread must fit")
    )
    judge: Literal["auto", "self", "off"] = Field(
        default="auto",
        description=(
            "criterion llm (and the judge's false-positive rate on decoy needles): auto computes "
            "it only with a judge other than the model under test (--judge-model); self also lets "
            "the model judge its own extraction (the run is then marked self-judged); off never"
        ),
    )
    judge_candidates: int = Field(
        default=10, ge=1, description=("extracted entities shown to the judge per needle")
    )
    lost_in_the_middle: bool = Field(
        default=False, description=("re-extract every piece at the end (Section 4.2)")
    )
    encoder: Literal["auto", "minilm", "tfidf"] = Field(
        default="auto",
        description=(
            "semantic similarity: minilm (the minilm extra), tfidf, or auto (minilm when installed)"
        ),
    )
    control: bool = Field(
        default=True,
        description=(
            "also extract every document without its needles (Section 5.2.2); a criterion that "
            "fires there is that criterion's false positive"
        ),
    )
    max_control_fp: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description=(
            "a criterion whose control false-positive rate for a type is above this is not used "
            "for that type's MINEA"
        ),
    )

    @model_validator(mode="after")
    def _shares_in_order(self) -> MineaOptions:
        if self.min_share > self.max_share:
            raise ValueError(
                f"min_share={self.min_share} > max_share={self.max_share}: "
                "need min_share <= max_share"
            )
        return self

    @property
    def uses_data_dir(self) -> bool:
        """Whether the haystacks come from the data folder (not ``minea.documents``)."""
        return self.documents is None
