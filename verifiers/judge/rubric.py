"""Rubrics: criteria, the score scale of each kind, and how verdicts become a reward.

A criterion's verdict is a number on its own scale (binary 0/1, ordinal index 0..k-1 over
``choices`` listed worst to best, likert ``min``..``max``), normalised to ``s`` in [0, 1].
For a pitfall (negative ``weight``) ``s`` is how strongly the pitfall is present.

Explicit reward: ``sum(w * s) / sum(|w|)``, so it lies in ``[-sum(neg)/T, sum(pos)/T]``
(``T = sum(|w|)``); a rubric without pitfalls gives [0, 1]. A failed critical criterion
vetoes the reward (it becomes ``veto_reward``): a positive one fails when ``s`` is below
its ``critical_threshold``, a pitfall when ``s`` reaches it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from referee.verifiers.rules.field_error import field_error

MAX_CRITERIA = 64
Kind = Literal["binary", "ordinal", "likert"]


class Criterion(BaseModel):
    """One rubric line. Judges answer binary with 1/0, ordinal with the choice's index and
    likert with an integer in ``[min, max]``."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    id: str = Field(pattern=r"^[A-Za-z0-9_.\-]+$", max_length=64)
    text: str = Field(min_length=1, max_length=4000)
    weight: float = 1.0
    """Importance; negative marks a pitfall (something the response should not do)."""
    kind: Kind = "binary"
    choices: list[str] | None = Field(default=None, min_length=2, max_length=11)
    """Ordinal levels, worst to best."""
    min: int = 1
    max: int = 5
    critical: bool = False
    critical_threshold: float = Field(default=0.5, gt=0, le=1)

    @model_validator(mode="after")
    def _check_scale(self) -> Criterion:
        if self.weight == 0:
            raise field_error("Criterion", "weight", "must not be 0", self.weight)
        if self.kind == "ordinal" and not self.choices:
            raise field_error("Criterion", "choices", "ordinal criteria need choices", None)
        if self.kind == "likert" and not 0 < self.max - self.min <= 100:
            raise field_error("Criterion", "max", "likert needs min < max <= min + 100", self.max)
        return self

    def scale(self) -> dict[str, float]:
        """Accepted answer tokens (lower case) -> raw value on this criterion's scale."""
        if self.kind == "binary":
            return {"0": 0.0, "1": 1.0, "no": 0.0, "yes": 1.0, "false": 0.0, "true": 1.0}
        if self.kind == "ordinal":
            choices = self.choices or []
            by_index = {str(i): float(i) for i in range(len(choices))}
            by_text = {c.strip().lower(): float(i) for i, c in enumerate(choices)}
            return {**by_text, **by_index}
        return {str(v): float(v) for v in range(self.min, self.max + 1)}

    def bounds(self) -> tuple[float, float]:
        """Lowest and highest raw value."""
        if self.kind == "binary":
            return 0.0, 1.0
        if self.kind == "ordinal":
            return 0.0, float(len(self.choices or []) - 1)
        return float(self.min), float(self.max)

    def normalise(self, raw: float) -> float:
        """``raw`` on this scale -> ``s`` in [0, 1] (clamped)."""
        low, high = self.bounds()
        return min(1.0, max(0.0, (raw - low) / (high - low)))

    def fails(self, s: float) -> bool:
        """Whether ``s`` fails this criterion as a critical one (see the module docstring)."""
        if self.weight > 0:
            return s < self.critical_threshold
        return s >= self.critical_threshold


class Rubric(BaseModel):
    """The item's ``reference``: criteria and an optional reference answer.

    A bare list of criteria is accepted as ``{"rubric": [...]}``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    rubric: list[Criterion] = Field(default_factory=list, max_length=MAX_CRITERIA)
    answer: str | None = Field(default=None, max_length=200_000)
    """A reference answer shown to the judge; the anchor of pairwise mode."""

    @model_validator(mode="before")
    @classmethod
    def _accept_list(cls, value: Any) -> Any:
        if isinstance(value, list):
            return {"rubric": value}
        if value is None:
            return {}
        return value

    @model_validator(mode="after")
    def _unique_ids(self) -> Rubric:
        ids = [c.id for c in self.rubric]
        if len(ids) != len(set(ids)):
            duplicate = next(i for i in ids if ids.count(i) > 1)
            raise field_error("Rubric", "rubric", f"duplicate criterion id {duplicate!r}", ids)
        return self


@dataclass(frozen=True)
class RubricScore:
    """The explicit-mode reward and why: ``vetoed_by`` lists failed critical criteria."""

    reward: float
    vetoed_by: list[str]


def aggregate(
    criteria: Sequence[Criterion], scores: dict[str, float], veto_reward: float = 0.0
) -> RubricScore:
    """``sum(w * s) / sum(|w|)`` over ``criteria`` with normalised ``scores`` by id, or
    ``veto_reward`` when a critical criterion fails. Every criterion must have a score."""
    vetoed = [c.id for c in criteria if c.critical and c.fails(scores[c.id])]
    if vetoed:
        return RubricScore(reward=veto_reward, vetoed_by=vetoed)
    total = math.fsum(abs(c.weight) for c in criteria)
    earned = math.fsum(c.weight * scores[c.id] for c in criteria)
    return RubricScore(reward=earned / total, vetoed_by=[])


def split(criteria: Sequence[Criterion], per_call: int | None) -> list[list[Criterion]]:
    """Chunks of at most ``per_call`` criteria (all in one chunk when ``per_call`` is None)."""
    size = per_call or max(len(criteria), 1)
    return [list(criteria[i : i + size]) for i in range(0, len(criteria), size)]
