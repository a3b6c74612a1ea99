from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers import Status

INVALID_GOLD: list[Any] = [
    "\\frac{",
    "\\sqrt{",
    "}{",
    "",
    "   ",
    "((((",
    "x = ",
    "@#&",
    "\\begin{pmatrix}",
    "9^{9^{9^9}}",
    "(10^{10^7})!",
    "1" * 6000,
    "x" * 5000,
    "\\frac{1}{0}",
    "x = 2+2 = 5",
    None,
    True,
    {"answer": 1},
    [],
    ["5", None],
]


@pytest.mark.parametrize("gold", INVALID_GOLD, ids=lambda g: repr(g)[:24])
@pytest.mark.parametrize("response", ["\\boxed{5}", "\\boxed{\\frac{}"])
def test_unparsable_gold_is_invalid_never_a_reward(score, gold, response) -> None:  # type: ignore[no-untyped-def]
    result = score("math", response, gold)
    assert result.status == Status.INVALID, result
    assert result.reward is None
    assert result.error is not None
    assert result.error.code == "invalid_reference"


def test_unparsable_gold_is_invalid_even_when_identical(score) -> None:  # type: ignore[no-untyped-def]
    result = score("math", "\\boxed{\\frac{}", "\\frac{")
    assert result.status == Status.INVALID


@pytest.mark.parametrize(
    "params",
    [{"tolerance": "loose"}, {"strategies": ["nowhere"]}, {"rel_tol": 0}, {"unknown": 1}],
)
def test_bad_params_are_invalid(score, params) -> None:  # type: ignore[no-untyped-def]
    result = score("math", "\\boxed{5}", "5", **params)
    assert result.status == Status.INVALID
    assert result.error is not None
    assert result.error.code == "invalid_params"


@pytest.mark.parametrize(
    "answer", ["\\frac{", "}{", "@#&", "\\begin{pmatrix}", "9^{9^{9^9}}", "(10^{10^7})!"]
)
def test_unreadable_prediction_scores_zero(score, answer) -> None:  # type: ignore[no-untyped-def]
    result = score("math", f"\\boxed{{{answer}}}", "5")
    assert result.status == Status.OK
    assert result.reward == 0.0
    assert result.details["rule"] in (
        "unparsable_answer",
        "unsafe_answer",
        "not_equal",
        "no_answer",
    )
