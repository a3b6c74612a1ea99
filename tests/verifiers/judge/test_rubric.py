from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from referee.verifiers.judge.rubric import Criterion, Rubric, aggregate, split


def crit(cid: str, weight: float = 1.0, **kw: Any) -> Criterion:
    return Criterion(id=cid, text=f"{cid} holds", weight=weight, **kw)


AGGREGATE_CASES: list[tuple[list[Criterion], dict[str, float], float, list[str]]] = [
    # (criteria, normalised scores, expected reward, vetoed_by)
    ([crit("a")], {"a": 1.0}, 1.0, []),
    ([crit("a")], {"a": 0.0}, 0.0, []),
    ([crit("a", 3), crit("b", 1)], {"a": 1.0, "b": 0.0}, 0.75, []),
    ([crit("a", 2), crit("b", 2)], {"a": 0.5, "b": 1.0}, 0.75, []),
    # a pitfall that is present costs its weight; absent costs nothing
    ([crit("a", 3), crit("p", -1)], {"a": 1.0, "p": 1.0}, 0.5, []),
    ([crit("a", 3), crit("p", -1)], {"a": 1.0, "p": 0.0}, 0.75, []),
    ([crit("p", -2)], {"p": 1.0}, -1.0, []),
    # critical veto: a failed positive criterion, a present critical pitfall
    ([crit("a", critical=True), crit("b")], {"a": 0.0, "b": 1.0}, 0.0, ["a"]),
    ([crit("a", critical=True), crit("b")], {"a": 1.0, "b": 0.0}, 0.5, []),
    ([crit("a"), crit("p", -1, critical=True)], {"a": 1.0, "p": 1.0}, 0.0, ["p"]),
    ([crit("a"), crit("p", -1, critical=True)], {"a": 1.0, "p": 0.0}, 0.5, []),
    ([crit("a", critical=True, critical_threshold=0.8)], {"a": 0.75}, 0.0, ["a"]),
]


@pytest.mark.parametrize(("criteria", "scores", "reward", "vetoed"), AGGREGATE_CASES)
def test_aggregate(criteria, scores, reward, vetoed) -> None:  # type: ignore[no-untyped-def]
    outcome = aggregate(criteria, scores)
    assert outcome.reward == pytest.approx(reward)
    assert outcome.vetoed_by == vetoed


def test_veto_reward_is_configurable() -> None:
    outcome = aggregate([crit("a", critical=True)], {"a": 0.0}, veto_reward=-1.0)
    assert outcome.reward == -1.0


@pytest.mark.parametrize(
    ("criterion", "raw", "normalised"),
    [
        (crit("b"), 1.0, 1.0),
        (crit("b"), 0.0, 0.0),
        (crit("o", kind="ordinal", choices=["bad", "ok", "good"]), 1.0, 0.5),
        (crit("o", kind="ordinal", choices=["bad", "ok", "good"]), 2.0, 1.0),
        (crit("l", kind="likert", min=1, max=5), 4.0, 0.75),
        (crit("l", kind="likert", min=0, max=10), 3.0, 0.3),
    ],
)
def test_normalise(criterion: Criterion, raw: float, normalised: float) -> None:
    assert criterion.normalise(raw) == pytest.approx(normalised)


def test_ordinal_scale_accepts_index_and_choice_text() -> None:
    scale = crit("o", kind="ordinal", choices=["Bad", "Good"]).scale()
    assert scale["0"] == 0.0 and scale["good"] == 1.0


@pytest.mark.parametrize(
    ("reference", "field"),
    [
        ([{"id": "a", "text": "x", "weight": 0}], "rubric.0.weight"),
        ([{"id": "a", "text": "x", "kind": "ordinal"}], "rubric.0.choices"),
        ([{"id": "a", "text": "x", "kind": "likert", "min": 5, "max": 5}], "rubric.0.max"),
        ([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}], "rubric"),
        ([{"id": "bad id", "text": "x"}], "rubric.0.id"),
        ({"rubric": [], "extra": 1}, "extra"),
    ],
)
def test_bad_rubrics_name_the_field(reference: Any, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        Rubric.model_validate(reference)
    locations = [".".join(str(p) for p in e["loc"]) for e in info.value.errors()]
    assert field in locations


def test_split_chunks_in_order() -> None:
    criteria = [crit(str(i)) for i in range(5)]
    assert [[c.id for c in chunk] for chunk in split(criteria, 2)] == [
        ["0", "1"],
        ["2", "3"],
        ["4"],
    ]
    assert len(split(criteria, None)) == 1
