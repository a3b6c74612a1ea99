from __future__ import annotations

import pytest

from referee.verifiers.code.aggregation import Aggregate, aggregate
from referee.verifiers.code.suite import Subtask

SUBTASKS = [Subtask(cases=[0, 1], weight=30), Subtask(cases=[2, 3], weight=70)]

CASES: list[tuple[list[float], Aggregate, list[Subtask], float]] = [
    ([1, 1, 0, 1], "pass_rate", [], 0.75),
    ([1, 1, 1, 1], "all", [], 1.0),
    ([1, 1, 0.5, 1], "all", [], 0.0),
    ([1, 1, 0, 1], "subtasks", SUBTASKS, 0.3),
    ([1, 0, 1, 1], "subtasks", SUBTASKS, 0.7),
    ([1, 1, 0.5, 1], "subtasks", SUBTASKS, 0.3 + 0.7 * 0.5),  # checker fractions kept
    ([1, 1, 1, 1], "subtasks", SUBTASKS, 1.0),
    ([1, 0.5], "subtasks", [], 0.5),  # no subtasks: one holding every case
    ([0.5, 1], "pass_rate", [], 0.75),
]


@pytest.mark.parametrize(("scores", "how", "subtasks", "reward"), CASES)
def test_aggregate(
    scores: list[float], how: Aggregate, subtasks: list[Subtask], reward: float
) -> None:
    assert aggregate(scores, how, subtasks) == pytest.approx(reward)
