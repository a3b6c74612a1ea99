from __future__ import annotations

import math

import pytest

from referee.verifiers.judge.logprobs import expected_value, parse_tokens
from referee.verifiers.judge.replies import Slot
from tests.verifiers.judge.endpoint import char_logprobs

SCALE = Slot("score", {str(v): float(v) for v in range(1, 6)}, (1, 5))
TEXT = '{"score": 4}'
AT = TEXT.index("4")


def tokens(alternatives: list[tuple[str, float]]):  # type: ignore[no-untyped-def]
    parsed = parse_tokens({"content": char_logprobs(TEXT, {AT: alternatives})})
    assert parsed is not None
    return parsed


@pytest.mark.parametrize(
    ("alternatives", "expected"),
    [
        ([("4", 0.0)], 4.0),
        ([("4", math.log(0.5)), ("2", math.log(0.5))], 3.0),
        (
            [("5", math.log(0.6)), ("3", math.log(0.2)), ("x", math.log(0.2))],
            4.5,
        ),  # off-scale ignored
        ([(" 4", math.log(0.25)), ('"1', math.log(0.75))], 1.75),  # spacing/quotes stripped
        ([("x", 0.0)], None),  # nothing on the scale: caller keeps the sample
    ],
)
def test_expected_value(alternatives: list[tuple[str, float]], expected: float | None) -> None:
    value = expected_value(tokens(alternatives), TEXT, AT, SCALE)
    assert value == (pytest.approx(expected) if expected is not None else None)


def test_tokens_that_do_not_spell_the_text_are_ignored() -> None:
    assert expected_value(tokens([("4", 0.0)]), TEXT + " ", AT, SCALE) is None


@pytest.mark.parametrize("raw", [None, {}, {"content": None}, {"content": [{"logprob": 0}]}])
def test_missing_logprobs(raw: object) -> None:
    assert parse_tokens(raw) is None
