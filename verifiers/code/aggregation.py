"""Turn per-case scores into one reward.

- ``pass_rate`` (default): the mean case score (a case scores 1 or 0, or a checker's
  fraction).
- ``all``: 1.0 when every case scores 1, else 0.0.
- ``subtasks``: IOI style; each subtask scores the minimum of its cases, and the reward is
  the weight-averaged subtask score. Without subtasks in the reference, one subtask holds
  every case (the same as ``all`` with fractional checker scores kept).

Cases that were never run (early exit, time budget) are passed in as 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from referee.verifiers.code.suite import Subtask

Aggregate = Literal["pass_rate", "all", "subtasks"]


def aggregate(scores: Sequence[float], how: Aggregate, subtasks: Sequence[Subtask]) -> float:
    """The reward in [0, 1] for case ``scores`` (each in [0, 1]); ``scores`` is non-empty."""
    if not scores:
        return 0.0
    if how == "pass_rate":
        return sum(scores) / len(scores)
    if how == "all":
        return 1.0 if all(s >= 1.0 for s in scores) else 0.0
    groups = list(subtasks) or [Subtask(cases=list(range(len(scores))))]
    total = sum(g.weight for g in groups)
    earned = sum(g.weight * min(scores[c] for c in g.cases) for g in groups)
    return earned / total if total > 0 else 0.0


def subtask_scores(scores: Sequence[float], subtasks: Sequence[Subtask]) -> list[float]:
    """Each subtask's score (the minimum of its cases), for the details."""
    return [min(scores[c] for c in s.cases) for s in subtasks]
