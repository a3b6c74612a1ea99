from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers import Status

OPTIONS = ["London", "Paris", "Berlin", "Madrid"]

CASES: list[tuple[Any, Any, dict[str, Any], float]] = [
    # (response, reference, params, expected reward)
    # explicit forms in the whole response
    ("(C)", "C", {}, 1.0),
    ("C)", "C", {}, 1.0),
    ("C", "C", {}, 1.0),
    ("c", "C", {}, 1.0),
    ("C.", "C", {}, 1.0),
    ("(C)", "B", {}, 0.0),
    ("Option (B) is wrong, so I pick (D).", "D", {}, 1.0),
    ("Let me look.\nC) 42 fits the constraint", "C", {}, 1.0),
    # answer segments
    ("Answer: C", "C", {}, 1.0),
    ("answer: (c)", "C", {}, 1.0),
    ("the answer is c", "C", {}, 1.0),
    ("the answer is c", "(C)", {}, 1.0),  # gold given with parentheses
    ("the answer is c", "c", {}, 1.0),  # gold is case-insensitive
    ("The correct answer is option B", "B", {}, 1.0),
    ("The correct option is **C**", "C", {}, 1.0),  # no "answer" in it
    ("The best choice is C.", "C", {}, 1.0),
    ("The correct option is **C**", "A", {}, 0.0),
    ("The correct option is not A; it is D.", "A", {}, 0.0),
    ("Option A: 5 apples. Option B: 7 apples.", "A", {}, 0.0),  # options listed, none chosen
    ("The answer is C. Another option is A.", "C", {}, 1.0),  # an alternative, not the pick
    ("My choice: B", "B", {}, 1.0),
    ("**Answer:** B", "B", {}, 1.0),
    ("**Answer**: (b)", "B", {}, 1.0),
    ("The answer is:\n\n(C)", "C", {}, 1.0),
    ("**Final Answer**\n\nD", "D", {}, 1.0),
    ("Answer: A is correct", "A", {}, 1.0),
    ("Answer: B, since A and C are wrong", "B", {}, 1.0),
    ("The answer is (B) because (A) overstates it", "B", {}, 1.0),
    ("The answer is 'C'.", "C", {}, 1.0),
    ("Answer: C", "B", {}, 0.0),
    # the article "A" and the pronoun "I" are not options
    ("Answer: A good choice is (B)", "B", {}, 1.0),
    ("Answer: A good choice is (B)", "A", {}, 0.0),
    ("Answer: I think it is B", "B", {}, 1.0),
    ("The answer is a prime number", "A", {}, 0.0),
    # a later segment that names nothing does not hide an earlier answer
    ("Answer: (B)\nDouble-checking the answer: yes, it holds.", "B", {}, 1.0),
    # a negated answer is not an answer; the explicit (C) afterwards is
    ("The answer is not (A); it must be (C).", "C", {}, 1.0),
    # boxed wins over everything else, and only the last one counts
    ("\\boxed{C}", "C", {}, 1.0),
    ("\\boxed{\\text{C}}", "C", {}, 1.0),
    ("$\\boxed{\\textbf{(c)}}$", "C", {}, 1.0),
    ("Answer: (A)\nOn reflection, \\boxed{D}", "D", {}, 1.0),
    ("\\boxed{A} no wait \\boxed{B}", "A", {}, 0.0),
    ("\\boxed{}\nAnswer: C", "C", {}, 0.0),  # an empty box is the final answer: none
    ("\\boxed{C", "C", {}, 0.0),  # an unclosed box is no box, and "\\boxed{C" no answer
    # several distinct options are wrong, even when gold is among them
    ("A or C", "A", {}, 0.0),
    ("\\boxed{A, C}", "C", {}, 0.0),
    ("(A) and (C)", "A", {}, 0.0),
    ("Answer: A and/or C", "C", {}, 0.0),
    ("Answer: A/C", "C", {}, 0.0),  # once read as C alone: the A touching "/" was dropped
    ("Answer: A&C", "C", {}, 0.0),
    ("Answer: A+C", "C", {}, 0.0),
    ("\\boxed{A/C}", "C", {}, 0.0),
    ("Answer: (B) or (B)", "B", {}, 1.0),  # the same option twice is one answer
    # letters outside the allowed set, lowercase enumerations, function calls
    ("Answer: (E)", "A", {"letters": "ABCD"}, 0.0),
    ("We list (a) the cost and (b) the time.", "A", {}, 0.0),
    ("so f(c) = 3", "C", {}, 0.0),
    ("", "A", {}, 0.0),
    ("I have no idea.", "A", {}, 0.0),
    # option texts: as gold, as answer, and beating a bare letter inside the text
    ("Paris", "B", {"options": OPTIONS}, 1.0),
    ("The answer is paris.", "Paris", {"options": OPTIONS}, 1.0),
    ("The answer is (B)", "Paris", {"options": OPTIONS}, 1.0),
    ("\\boxed{\\text{Berlin}}", "B", {"options": OPTIONS}, 0.0),
    ("Paris", "B", {"options": OPTIONS, "allow_text_match": False}, 0.0),
    ("Answer: Vitamin C", "A", {"options": ["Vitamin C", "Vitamin D", "Iron"]}, 1.0),
    ("Answer: Vitamin C", "x", {"options": {"x": "Vitamin C", "y": "Iron"}}, 1.0),
    ("Answer: (Y)", "Iron", {"options": {"x": "Vitamin C", "y": "Iron"}}, 1.0),
    ("Answer: K", "K", {"letters": "jk"}, 1.0),
    # chat responses use the last assistant turn
    (
        [{"role": "user", "content": "Pick one"}, {"role": "assistant", "content": "(B)"}],
        "B",
        {},
        1.0,
    ),
]


@pytest.mark.parametrize(("response", "reference", "params", "expected"), CASES)
def test_choice_cases(score, response, reference, params, expected) -> None:  # type: ignore[no-untyped-def]
    result = score("choice", response, reference, **params)
    assert result.status == Status.OK, result.error
    assert result.reward == expected, result.details
    assert result.verifier == "choice@1"


@pytest.mark.parametrize(
    ("response", "details"),
    [
        ("Answer: (C)", {"extracted": "C", "gold": "B", "reason": "mismatch", "source": "answer"}),
        ("\\boxed{B}", {"extracted": "B", "gold": "B", "reason": "match", "source": "boxed"}),
        ("(B)", {"extracted": "B", "gold": "B", "reason": "match", "source": "response"}),
        ("no idea", {"extracted": None, "gold": "B", "reason": "no_answer", "source": "response"}),
        (
            "Answer: B or C",
            {"extracted": None, "reason": "ambiguous", "candidates": ["B", "C"]},
        ),
    ],
)
def test_choice_details(score, response, details) -> None:  # type: ignore[no-untyped-def]
    result = score("choice", response, "B")
    assert result.status == Status.OK
    assert details.items() <= result.details.items()


@pytest.mark.parametrize(
    ("reference", "params", "code", "field"),
    [
        (None, {}, "invalid_reference", "reference"),
        (3, {}, "invalid_reference", "reference"),
        ("  ", {}, "invalid_reference", "reference"),
        ("Paris", {}, "invalid_reference", "reference"),  # text gold needs options
        ("Rome", {"options": OPTIONS}, "invalid_reference", "reference"),
        ("Paris", {"options": ["Paris", "paris"]}, "invalid_reference", "reference"),
        ("E", {"options": OPTIONS}, "invalid_reference", "reference"),
        ("K", {}, "invalid_reference", "reference"),
        ("A", {"options": []}, "invalid_params", "params.options"),
        ("A", {"options": ["x", " "]}, "invalid_params", "params.options"),
        ("A", {"options": {"AB": "x"}}, "invalid_params", "params.options"),
        ("A", {"options": {"a": "x", "A": "y"}}, "invalid_params", "params.options"),
        ("A", {"options": ["x"] * 27}, "invalid_params", "params.options"),
        ("A", {"letters": "AB1"}, "invalid_params", "params.letters"),
        ("A", {"letters": "ABA"}, "invalid_params", "params.letters"),
        ("A", {"letters": "AB", "options": OPTIONS}, "invalid_params", "params.letters"),
        ("A", {"allow_text_match": "sometimes"}, "invalid_params", "params.allow_text_match"),
        ("A", {"choices": ["x"]}, "invalid_params", "params.choices"),
    ],
)
def test_choice_invalid(score, reference, params, code, field) -> None:  # type: ignore[no-untyped-def]
    result = score("choice", "Answer: A", reference, **params)
    assert result.status == Status.INVALID
    assert result.reward is None
    assert result.error.code == code
    assert field in result.error.message


@pytest.mark.parametrize(
    "response",
    [
        "\\boxed{" * 100_000,
        "answer:\n" * 50_000,
        "(A) B, " * 50_000,
        "\\text{" * 50_000 + "C" + "}" * 50_000,
    ],
)
def test_adversarial_responses_are_scored_quickly(score, response) -> None:  # type: ignore[no-untyped-def]
    result = score("choice", response, "C")
    assert result.status == Status.OK
    assert result.elapsed_ms < 5_000
