"""Choice hacks: naming every option, ruling options out, and the invariant that one
response cannot be right for two different gold letters."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers.rules.choice import ChoiceParams, ChoiceVerifier
from referee.verifiers.types import Item

VERIFIER = ChoiceVerifier()


def reward(response: str, gold: str) -> float:
    item = Item(verifier="choice", response=response, reference=gold)
    return VERIFIER.check(item, ChoiceParams()).reward


# (response, the only gold it may match, or None for none)
CASES = [
    ("Answer: not A, not B, not D, so C", "C"),
    ("not A, not B, not D, so C", None),
    ("Answer: neither A nor B but C", "C"),
    ("Answer: A is wrong, B is wrong, so C", "C"),
    ("Answer: C, not D", "C"),
    ("Answer: not A, not B, not C, not D", None),
    ("Answer: A or B or C or D", None),
    ("Answer: A, B, C, D", None),
    ("\\boxed{A} \\boxed{B} \\boxed{C} \\boxed{D}", "D"),
    ("\\boxed{A, B, C, D}", None),
    ("(A) (B) (C) (D)", None),
    ("Answer: all of them", None),
    ("Answer: except A", None),
    ("Answer: rule out B, so D", "D"),
]


@pytest.mark.parametrize(("response", "winner"), CASES)
def test_negations_and_every_option_listed(response: str, winner: str | None) -> None:
    for gold in "ABCD":
        assert reward(response, gold) == float(gold == winner), (response, gold)


WORDS = st.sampled_from(
    ["A", "B", "C", "D", "(A)", "(C)", "not", "or", "and", "nor", "neither", ",", "so",
     "is", "wrong", "answer:", "Answer:", "\\boxed{", "}", "option", "maybe", "\n"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(WORDS, max_size=14))
def test_one_response_matches_at_most_one_gold(words: list[str]) -> None:
    response = " ".join(words)
    assert sum(reward(response, gold) for gold in "ABCDEFGHIJ") <= 1.0, response
