"""The judge's item params and a validated item ready to score."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import Field, model_validator

from verifiers.base import Params
from verifiers.judge.rubric import MAX_CRITERIA, Rubric
from verifiers.rules.field_error import field_error
from verifiers.types import Item

Mode = Literal["explicit", "implicit", "pairwise", "tournament"]


class JudgeParams(Params):
    """Options of one judge item. The rubric and reference answer travel in ``reference``."""

    profile: str = Field(default="default", max_length=128)
    """Name of a configured judge profile (``REFEREE_JUDGE_PROFILES``)."""
    mode: Mode = "explicit"
    """``explicit``: a verdict per criterion; ``implicit``: one holistic score;
    ``pairwise``: against the reference answer or ``anchor``; ``tournament``: single
    elimination within the item's ``group``."""
    criteria_per_call: int | None = Field(default=None, ge=1, le=MAX_CRITERIA)
    """Explicit mode: split the rubric over concurrent calls of at most this many criteria."""
    scale_min: int = Field(default=1, ge=0, le=100)
    scale_max: int = Field(default=10, ge=1, le=100)
    """Implicit mode's integer scale; the reward is ``(score - min) / (max - min)``."""
    scoring: Literal["auto", "sample", "logprobs"] = "auto"
    """``auto`` weighs by logprobs when the profile supports them, else uses the sample."""
    samples: int = Field(default=1, ge=1, le=16)
    """Replies per question (the request's ``n``); scores are their mean."""
    max_reasks: int = Field(default=1, ge=0, le=3)
    """Re-asks after an unparsable reply before the item is ``error`` (judge_unparsable)."""
    deadline_s: float | None = Field(default=None, gt=0, le=600)
    """Budget for this item (all calls, retries, re-asks); default from settings."""
    veto_reward: float = Field(default=0.0, ge=-1, le=1)
    """Explicit mode: the reward when a critical criterion fails."""
    seed: int = 0
    """Tournament mode: seeds the bracket (with the group key) and tie breaks."""
    anchor: str | None = Field(default=None, max_length=200_000)
    """Pairwise mode: the response to compare against, instead of the reference answer."""
    cache: bool = True

    @model_validator(mode="after")
    def _check_scale(self) -> JudgeParams:
        if self.scale_min >= self.scale_max:
            raise field_error("JudgeParams", "scale_max", "must exceed scale_min", self.scale_max)
        return self


@dataclass(frozen=True)
class Job:
    """One validated judge item: its position in the call, params, rubric and deadline
    (``time.monotonic``)."""

    index: int
    item: Item
    params: JudgeParams
    rubric: Rubric
    deadline: float
    logprobs: bool

    @property
    def label(self) -> str:
        """How details name this item: its id, else ``#<position>``."""
        return self.item.id if self.item.id is not None else f"#{self.index}"
