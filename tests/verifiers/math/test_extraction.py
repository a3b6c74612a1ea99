from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers import Status
from referee.verifiers.math.extraction import DEFAULT_STRATEGIES, boxed_contents, extract

EXTRACTION: list[tuple[str, dict[str, Any], str | None, str]] = [
    # (response, options, expected answer, expected source)
    ("so \\boxed{42}.", {}, "42", "boxed"),
    ("\\boxed{1} then \\boxed{2}", {}, "2", "boxed"),
    ("\\boxed{2} so \\boxed{ 2 }", {}, " 2 ", "boxed"),
    ("\\fbox{7}", {}, "7", "boxed"),
    ("\\boxed 5 done", {}, "5", "boxed"),
    ("$\\boxed{\\frac{1}{2}}$", {}, "\\frac{1}{2}", "boxed"),
    ("\\boxed{\\{1,2\\}}", {}, "\\{1,2\\}", "boxed"),
    ("\\boxed{a^{2}}", {}, "a^{2}", "boxed"),
    ("The answer is 12. Done.", {}, "12", "answer"),
    ("So the answer is **12**.", {}, "12", "answer"),  # markdown emphasis
    ("The answer is **12.**", {}, "12", "answer"),
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
    # truncated responses: an unclosed final box is no answer, never read to the end, and
    # neither an earlier box nor a number inside it stands in for it
    ("\\boxed{3} and finally \\boxed{4", {}, None, "boxed"),
    ("\\boxed{4", {}, None, "boxed"),
    ("\\boxed{{{{", {}, None, "boxed"),
    ("Long reasoning... \\boxed{\\frac{1}{2", {}, None, "boxed"),
    # empty boxes are skipped
    ("\\boxed{} so 5", {}, "5", "last_number"),
    # never a fragment of a word or of a LaTeX construct
    ("AZYUK2A", {}, None, "none"),
    ("so \\frac{1+\\sqrt{5}}{2}", {}, None, "none"),
    ("we sum \\sum_{k=0}^n a_k here", {}, None, "none"),
    ("the exponent in x^2 is", {}, None, "none"),
    ("the index a_3 is", {}, None, "none"),
    ("version v2 of the answer", {}, None, "none"),
    ("total 1,234 apples", {}, "1,234", "last_number"),
    ("so we get 0,111 here", {}, "0,111", "last_number"),
    ("so we get 11 7/6 here", {}, None, "last_number"),
    ("so we get 11 1/2 here", {}, "11\\frac{1}{2}", "last_number"),
    ("we get 3 4", {}, None, "last_number"),
    ("is 42.", {}, "42", "last_number"),
    # the final math expression, whatever its delimiters
    ("\\(\\frac{3}{4}\\)", {}, "\\frac{3}{4}", "math_span"),
    ("so the area is \\[ \\frac{3}{4} \\].", {}, "\\frac{3}{4}", "math_span"),
    ("so $$x = 2$$", {}, "x = 2", "math_span"),
    ("Thus $\\frac{1}{2}$.", {}, "\\frac{1}{2}", "math_span"),
    ("so $x=3$ and then 5 more", {}, "5", "last_number"),
    ("It costs $5 and $7", {}, "7", "last_number"),
    # bare answers: the whole response, when it is one short line of math
    ("42", {}, "42", "bare"),
    ("\\frac{1}{2}", {}, "\\frac{1}{2}", "bare"),
    ("x = -3 \\text{ or } x = 2", {}, "x = -3 \\text{ or } x = 2", "bare"),
    ("Final answer: 7/2", {}, "7/2", "answer"),
    ("The final answer is 12 apples.", {}, "12 apples", "answer"),
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


SCORED: list[tuple[Any, Any, dict[str, Any], float]] = [
    ("The answer is 12.", "12", {}, 1.0),
    ("#### 72", "72", {}, 1.0),
    ("the total is 41 then 42", "42", {}, 1.0),
    ("the total is 41 then 42", "42", {"strict": True}, 0.0),
    ("\\boxed{42} or maybe \\boxed{41}", "41", {"strict": True}, 0.0),
    ("\\boxed{42} or maybe \\boxed{41}", "41", {}, 1.0),
    ("\\boxed{A} \\boxed{B} \\boxed{C} \\boxed{D}", "C", {"strict": True}, 0.0),
    ("\\boxed{A, B, C, D}", "C", {}, 0.0),
    ("\\boxed{\\frac{1}{2", "\\frac{1}{2}", {"strict": True}, 0.0),
    ("Long reasoning... \\boxed{\\frac{1}{2", "2", {}, 0.0),
    ("Long reasoning... \\boxed{\\frac{1}{2", "\\frac{1}{2}", {}, 0.0),
    ("\\(\\frac{3}{4}\\)", "4", {}, 0.0),
    ("\\(\\frac{3}{4}\\)", "\\frac{3}{4}", {}, 1.0),
    ("AZYUK2A", "2", {}, 0.0),
    ("so \\frac{1+\\sqrt{5}}{2}", "2", {}, 0.0),
    ("\\sum_{k=0}^n", "0", {}, 0.0),
    ("so we get 11 7/6", "7/6", {}, 0.0),
    ("11 7/6", "7/6", {}, 0.0),
    ("11 7/6", "\\frac{77}{6}", {}, 0.0),
    ("so we get 11 1/2", "\\frac{23}{2}", {}, 1.0),
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
