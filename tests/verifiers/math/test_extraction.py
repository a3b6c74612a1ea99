from __future__ import annotations

from typing import Any

import pytest

from verifiers import Status
from verifiers.math.extraction import DEFAULT_STRATEGIES, boxed_contents, extract

EXTRACTION: list[tuple[str, dict[str, Any], str | None, str]] = [
    # (response, options, expected answer, expected source)
    ("so \\boxed{42}.", {}, "42", "boxed"),
    ("\\boxed{1} then \\boxed{2}", {}, "2", "boxed"),
    ("\\fbox{7}", {}, "7", "boxed"),
    ("\\boxed 5 done", {}, "5", "boxed"),
    ("$\\boxed{\\frac{1}{2}}$", {}, "\\frac{1}{2}", "boxed"),
    ("\\boxed{\\{1,2\\}}", {}, "\\{1,2\\}", "boxed"),
    ("\\boxed{a^{2}}", {}, "a^{2}", "boxed"),
    ("The answer is 12. Done.", {}, "12", "answer"),
    ("The final answer is $\\frac{3}{4}$.", {}, "\\frac{3}{4}", "answer"),
    ("**Final Answer**\n\n17", {}, "17", "answer"),
    ("Answer: 3.5", {}, "3.5", "answer"),
    ("The answer is not 4; Answer: 5", {}, "5", "answer"),
    ("blah\n#### 1,234", {}, "1,234", "gsm8k"),
    ("I think 3 apples plus 4 makes 7 apples", {}, "7", "last_number"),
    ("value -2.5 here", {}, "-2.5", "last_number"),
    ("ratio 3/4", {}, "3/4", "last_number"),
    ("no numbers at all", {}, None, "none"),
    ("", {}, None, "none"),
    # truncated responses: an unclosed box is skipped, never read to the end
    ("\\boxed{3} and finally \\boxed{4", {}, "3", "boxed"),
    ("\\boxed{4", {}, "4", "last_number"),
    ("\\boxed{{{{", {}, None, "none"),
    # strategy selection
    ("Answer: 3\n\\boxed{4}", {"strategies": ["answer"]}, "3", "answer"),
    ("Answer: 3 \\boxed{4}", {"strategies": ["boxed"]}, "4", "boxed"),
    ("12", {"strategies": ["whole"]}, "12", "whole"),
    ("it is 12", {"strategies": ["boxed"]}, None, "none"),
    # strict mode refuses answers the response never commits to
    ("I think 3 apples plus 4 makes 7 apples", {"strict": True}, None, "none"),
    ("\\boxed{3} wait \\boxed{4}", {"strict": True}, None, "boxed"),
    ("\\boxed{4} so indeed \\boxed{ 4 }", {"strict": True}, " 4 ", "boxed"),
    ("\\boxed{3} and finally \\boxed{4", {"strict": True}, None, "boxed"),
    ("The answer is 9", {"strict": True}, "9", "answer"),
    ("#### 9", {"strict": True}, "9", "gsm8k"),
]


@pytest.mark.parametrize(("response", "options", "answer", "source"), EXTRACTION)
def test_extraction(
    response: str, options: dict[str, Any], answer: str | None, source: str
) -> None:
    found = extract(
        response, options.get("strategies", DEFAULT_STRATEGIES), options.get("strict", False)
    )
    assert found.answer == answer
    assert found.source == source


def test_boxed_is_linear_on_unclosed_boxes() -> None:
    text = "\\boxed{" * 20_000
    boxes, truncated = boxed_contents(text)
    assert boxes == []
    assert truncated


SCORED: list[tuple[str, Any, dict[str, Any], float]] = [
    ("The answer is 12.", "12", {}, 1.0),
    ("#### 72", "72", {}, 1.0),
    ("the total is 41 then 42", "42", {}, 1.0),
    ("the total is 41 then 42", "42", {"strict": True}, 0.0),
    ("\\boxed{42} or maybe \\boxed{41}", "41", {"strict": True}, 0.0),
    ("\\boxed{42} or maybe \\boxed{41}", "41", {}, 1.0),
    ("\\boxed{A} \\boxed{B} \\boxed{C} \\boxed{D}", "C", {"strict": True}, 0.0),
    ("\\boxed{A, B, C, D}", "C", {}, 0.0),
    ("\\boxed{\\frac{1}{2", "\\frac{1}{2}", {"strict": True}, 0.0),
    ("Long reasoning... \\boxed{\\frac{1}{2", "2", {}, 1.0),  # last number, non-strict
    (
        [{"role": "user", "content": "?"}, {"role": "assistant", "content": "\\boxed{5}"}],
        "5",
        {},
        1.0,
    ),
    ("\\boxed{5}", 5, {}, 1.0),
    ("\\boxed{0.5}", 0.5, {}, 1.0),
    ("\\boxed{6}", ["5", "6"], {}, 1.0),
    ("\\boxed{7}", ["5", "6"], {}, 0.0),
    ("I give up", "5", {}, 0.0),
]


@pytest.mark.parametrize(("response", "reference", "params", "expected"), SCORED)
def test_scored_extraction(score, response, reference, params, expected) -> None:  # type: ignore[no-untyped-def]
    result = score("math", response, reference, **params)
    assert result.status == Status.OK, result.error
    assert result.reward == expected, result.details


def test_details_name_extraction_and_rule(score) -> None:  # type: ignore[no-untyped-def]
    result = score("math", "so $\\boxed{\\dfrac{1}{2}}$", "0.5")
    assert result.details["extracted"] == "\\dfrac{1}{2}"
    assert result.details["source"] == "boxed"
    assert result.details["pred_normalized"] == "\\frac{1}{2}"
    assert result.details["gold_normalized"] == "0.5"
    assert result.details["rule"] == "exact"
    missing = score("math", "no idea", "5", strict=True)
    assert missing.reward == 0.0
    assert missing.details["rule"] == "no_answer"
