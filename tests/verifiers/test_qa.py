"""The ``qa`` verifier: table cases, the attacks a policy would try, the two-golds
invariant, and agreement with verl's own Search-R1 exact-match scorer."""

from __future__ import annotations

import importlib
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers import Status
from referee.verifiers.rules.qa import normalize_answer, token_f1
from tests.service.peers.conftest import verl_reward_score

CASES: list[tuple[str, Any, dict[str, Any], Any]] = [
    # (response, reference, params, expected reward)
    ("<answer>Paris</answer>", "Paris", {}, 1.0),
    ("I think... <answer> the  Eiffel Tower! </answer>", "Eiffel tower", {}, 1.0),
    ("<answer>Barack Obama</answer>", ["Obama", "Barack Obama"], {}, 1.0),
    ("<answer>Barack Obama</answer>", {"target": ["Obama"]}, {}, 0.0),
    ("<answer>Barack Obama</answer>", '{"target": ["barack obama"]}', {}, 1.0),  # verl JSON
    ("<answer>Lyon</answer> no wait <answer>Paris</answer>", "Paris", {}, 1.0),  # the last
    ("<answer>Paris</answer> no wait <answer>Lyon</answer>", "Paris", {}, 0.0),
    ("Paris", "Paris", {}, 0.0),  # no tag: no answer
    ("<answer>Paris", "Paris", {}, 0.0),  # never closed
    ("Paris", "Paris", {"extract": "none"}, 1.0),
    ("So it is \\boxed{Paris}.", "Paris", {"extract": "boxed"}, 1.0),
    ("\\boxed{\\text{Paris}}", "paris", {"extract": "boxed"}, 1.0),
    ("\\boxed{Lyon} then \\boxed{Paris", "Paris", {"extract": "boxed"}, 0.0),  # unclosed last
    ("<answer>Barack Obama</answer>", "Obama", {"metric": "f1"}, pytest.approx(2 / 3)),
    ("<answer>Obama</answer>", "Barack Obama", {"metric": "f1"}, pytest.approx(2 / 3)),
    ("<answer>the Obama</answer>", "Obama", {"metric": "f1"}, 1.0),
    ("<answer>Bush</answer>", "Obama", {"metric": "f1"}, 0.0),
    ("<answer>Café Müller</answer>", "café müller", {}, 1.0),
]


@pytest.mark.parametrize(("response", "reference", "params", "expected"), CASES)
def test_qa_cases(score, response, reference, params, expected) -> None:  # type: ignore[no-untyped-def]
    result = score("qa", response, reference, **params)
    assert result.status == Status.OK, result.error
    assert result.reward == expected
    assert result.verifier == "qa@1"


ATTACKS: list[tuple[str, str, Any, dict[str, Any]]] = [
    # (name, response, reference, params): each must score exactly 0
    ("every candidate in one answer", "<answer>Paris Lyon Nice Lille</answer>", "Lyon", {}),
    ("empty answer vs an all-article gold", "<answer></answer>", ["The", "Paris"], {}),
    ("punctuation answer vs an all-article gold", "<answer>!?</answer>", ["a", "Lyon"], {}),
    ("the gold written outside the answer", "Lyon is the capital. <answer>?</answer>", "Lyon", {}),
    ("a tag opened inside another", "<answer><answer>Paris</answer>", "Paris", {}),
    ("answer tags in the reasoning only", "<think><answer>x", "x", {}),
    ("f1 on an answer of articles", "<answer>the a an</answer>", "The Who", {"metric": "f1"}),
    ("spelled in another script", "<answer>\u0420\u0430ris</answer>", "Paris", {}),  # Cyrillic
]


@pytest.mark.parametrize(("name", "response", "reference", "params"), ATTACKS, ids=lambda a: a)
def test_attacks_score_zero(score, name, response, reference, params) -> None:  # type: ignore[no-untyped-def]
    result = score("qa", response, reference, **params)
    assert result.status == Status.OK, result.error
    assert result.reward == 0.0, (name, result.details)


def test_listing_candidates_lowers_f1(score) -> None:  # type: ignore[no-untyped-def]
    one = score("qa", "<answer>Lyon</answer>", "Lyon", metric="f1").reward
    listed = score("qa", "<answer>Paris Lyon Nice Lille</answer>", "Lyon", metric="f1").reward
    assert one == 1.0 and listed == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("reference", "field"),
    [
        (["The", "!"], "normalises to nothing"),
        ({"answers": ["x"]}, "'target'"),
        ([], "non-empty list"),
        (3, "string"),
        (None, "string"),
    ],
)
def test_bad_references_are_invalid(score, reference: Any, field: str) -> None:  # type: ignore[no-untyped-def]
    result = score("qa", "<answer>x</answer>", reference)
    assert result.status == Status.INVALID
    assert result.error is not None and field in result.error.message


WORDS = st.sampled_from(["Paris", "the", "Lyon", "a", "Nice", "an", "Lille", "Tour", "d'Eiffel"])
ANSWERS = st.lists(WORDS, min_size=1, max_size=4).map(" ".join)


@settings(max_examples=300, derandomize=True, deadline=None)
@given(answer=ANSWERS, first=ANSWERS, second=ANSWERS)
def test_one_answer_is_not_right_for_two_different_golds(  # type: ignore[no-untyped-def]
    score, answer: str, first: str, second: str
) -> None:
    if not normalize_answer(first) or not normalize_answer(second):
        return
    if normalize_answer(first) == normalize_answer(second):
        return
    response = f"<answer>{answer}</answer>"
    rewards = [score("qa", response, gold).reward for gold in (first, second)]
    assert rewards != [1.0, 1.0]


def test_token_f1_is_symmetric_and_bounded() -> None:
    rng = random.Random(0)
    for _ in range(200):
        a = rng.choices(["x", "y", "z", "w"], k=rng.randint(1, 5))
        b = rng.choices(["x", "y", "z", "w"], k=rng.randint(1, 5))
        assert token_f1(a, b) == pytest.approx(token_f1(b, a))
        assert 0.0 <= token_f1(a, b) <= 1.0
        assert token_f1(a, a) == 1.0


def random_response(rng: random.Random) -> str:
    """Text around 0-4 answer blocks of random words, cases and punctuation."""
    words = ["Paris", "the", "LYON", "a", "nice", "An", "Lille", "tour", "d'Eiffel", "!", "."]
    parts = []
    for _ in range(rng.randint(0, 4)):
        inner = " ".join(rng.choices(words, k=rng.randint(0, 3)))
        parts.append(f"{' '.join(rng.choices(words, k=2))} <answer>{inner}</answer>")
    if rng.random() < 0.2:
        parts.append("<answer>unclosed")
    return "\n".join(parts)


def test_agrees_with_verls_search_r1_exact_match(score) -> None:  # type: ignore[no-untyped-def]
    """verl's ``search_r1_like_qa_em.compute_score`` and ``qa`` (em, answer_tag) agree,
    apart from the one deliberate difference: a gold that normalises to nothing, which an
    empty answer would match there, is not used here (such golds are not drawn)."""
    verl_reward_score()  # verl's package set up without its ray-importing __init__
    module = importlib.import_module("verl.utils.reward_score.search_r1_like_qa_em")
    from_verl = module.compute_score
    rng = random.Random(7)
    golds_pool = ["Paris", "The Lyon", "nice", "Tour d'Eiffel", "LILLE!"]
    compared = 0.0
    for _ in range(2000):
        response = random_response(rng)
        golds = rng.sample(golds_pool, rng.randint(1, 3))
        theirs = float(from_verl(response, {"target": golds}))
        ours = score("qa", response, {"target": golds}).reward
        assert ours == theirs, (response, golds)
        compared += theirs
    assert compared > 50  # right answers were drawn, not only wrong ones


@pytest.mark.parametrize(
    "response",
    ["<answer>" * 200_000, "</answer><answer>" * 100_000 + "<answer>", "<answer>x" * 150_000],
    ids=["unclosed opens", "alternating", "opens with text"],
)
def test_many_tags_cost_time_linear_in_the_response(score, response: str) -> None:  # type: ignore[no-untyped-def]
    """A regex with a lazy group rescans to the end from every unclosed tag (26 s for 20k
    of them); the scan is linear, so a large response is scored well inside its timeout."""
    result = score("qa", response, "x")
    assert result.status == Status.OK, result.error


def test_details_keep_a_bounded_part_of_the_answer(score) -> None:  # type: ignore[no-untyped-def]
    result = score("qa", "word " * 100_000, "word", extract="none")
    assert result.status == Status.OK and result.reward == 0.0
    assert len(result.details["answer"]) == 200
