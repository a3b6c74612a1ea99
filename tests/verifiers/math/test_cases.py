from __future__ import annotations

import pytest

from referee.verifiers import Status
from tests.verifiers.math.cases import CASES


@pytest.mark.parametrize(("category", "gold", "response", "expected"), CASES)
def test_labelled_suite(score, category, gold, response, expected) -> None:  # type: ignore[no-untyped-def]
    result = score("math", response, gold)
    assert result.status == Status.OK, result.error
    assert result.reward == float(expected), (category, result.details)
    assert result.verifier == "math@1"
    details = result.details
    assert details["source"] == "boxed"
    assert "gold_normalized" in details
    assert "pred_normalized" in details
    assert details["rule"]


def test_suite_covers_every_category_both_ways() -> None:
    seen: dict[str, set[int]] = {}
    for category, _, _, expected in CASES:
        seen.setdefault(category, set()).add(expected)
    assert len(CASES) >= 300
    for category, labels in seen.items():
        assert labels == {0, 1}, category


def test_a_false_chain_names_the_side_that_breaks_it(score) -> None:  # type: ignore[no-untyped-def]
    result = score("math", "\\boxed{x = 2+2 = 5}", "5")
    assert result.reward == 0.0
    assert result.details["rule"] == "false_chain"
    assert "2+2" in result.details["reason"]


def test_a_point_by_its_coordinates_matches_the_pair(score) -> None:  # type: ignore[no-untyped-def]
    result = score("math", "\\boxed{x=5, y=6}", "(5,6)")
    assert result.reward == 1.0
    assert result.details["rule"] == "coordinates"
