from __future__ import annotations

import pytest

from referee.verifiers.judge.replies import ReplySpec, ReplyUnparsable, Slot, parse_reply
from referee.verifiers.judge.rubric import Criterion

BINARY = Criterion(id="clear", text="t").scale()
ORDINAL = Criterion(id="tone", text="t", kind="ordinal", choices=["rude", "neutral", "kind"])
LIKERT = Criterion(id="depth", text="t", kind="likert", min=1, max=5)
EXPLICIT = ReplySpec(
    (Slot("clear", BINARY), Slot("tone", ORDINAL.scale()), Slot("depth", LIKERT.scale(), (1, 5))),
    listed=True,
)
IMPLICIT = ReplySpec((Slot("score", {str(v): float(v) for v in range(1, 11)}, (1, 10)),), False)

EXPLICIT_CASES: list[tuple[str, dict[str, float]]] = [
    (
        '{"criteria": [{"id": "clear", "reason": "r", "score": 1}, {"id": "tone", "score": 2},'
        ' {"id": "depth", "score": 4}]}',
        {"clear": 1, "tone": 2, "depth": 4},
    ),
    (  # prose around a fenced block, trailing commas, yes/no, choice text, numeric string
        'Sure!\n```json\n{"criteria": [{"id": "clear", "score": "yes"}, {"id": "tone",'
        ' "verdict": "Neutral"}, {"id": "depth", "score": "3",},]}\n```\nHope that helps.',
        {"clear": 1, "tone": 1, "depth": 3},
    ),
    (
        '[{"id": "clear", "score": false}, {"id": "tone", "score": 0},'
        ' {"id": "depth", "score": 5}]',
        {"clear": 0, "tone": 0, "depth": 5},
    ),
    (
        '{"clear": 1, "tone": {"score": 2, "reason": "warm"}, "depth": 2.5}',
        {"clear": 1, "tone": 2, "depth": 2.5},
    ),
    ("I think: clear: 1\ntone = 2\ndepth: 4", {"clear": 1, "tone": 2, "depth": 4}),
    (  # prose with a stray brace before the real object
        'Scores {see below}: {"criteria": [{"id": "clear", "score": 0}, {"id": "tone", "score": 1},'
        ' {"id": "depth", "score": 1}]}',
        {"clear": 0, "tone": 1, "depth": 1},
    ),
]


@pytest.mark.parametrize(("text", "expected"), EXPLICIT_CASES)
def test_explicit_replies(text: str, expected: dict[str, float]) -> None:
    verdicts = parse_reply(text, EXPLICIT)
    assert {k: v.value for k, v in verdicts.items()} == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("I refuse to grade this.", "no JSON"),
        ('{"criteria": [{"id": "clear", "score": 1}]}', "tone"),
        (
            '{"criteria": [{"id": "clear", "score": 7}, {"id": "tone", "score": 1},'
            ' {"id": "depth", "score": 1}]}',
            "clear",
        ),
        (
            '{"criteria": [{"id": "clear", "score": 1}, {"id": "tone", "score": 1},'
            ' {"id": "depth", "score": 9}]}',
            "depth",
        ),
        (
            '{"criteria": [{"id": "clear", "score": 1}, {"id": "tone", "score": 1},'
            ' {"id": "depth", "score": null}]}',
            "depth",
        ),
        ('{"criteria": [{"id": "clear", "score": 1},', "no score for criteria tone, depth"),
    ],
)
def test_unparsable_explicit_replies_say_why(text: str, problem: str) -> None:
    with pytest.raises(ReplyUnparsable, match=problem):
        parse_reply(text, EXPLICIT)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"reason": "fine", "score": 7}', 7.0),
        ('{"score": 7.5, "reason": "x"}', 7.5),
        ("Score: 8/10", 8.0),
        ("**Score**: 3", 3.0),
        ("6", 6.0),
        ('```\n{"reason": "a", "score": "9"}\n```', 9.0),
    ],
)
def test_implicit_replies(text: str, expected: float) -> None:
    assert parse_reply(text, IMPLICIT)["score"].value == expected


@pytest.mark.parametrize(
    "text", ['{"score": 11}', '{"score": 0}', "great answer", '{"rating": "x"}']
)
def test_unparsable_implicit_replies(text: str) -> None:
    with pytest.raises(ReplyUnparsable):
        parse_reply(text, IMPLICIT)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[" * 30_000, None),
        ('{"a":' * 30_000, None),
        ("[" * 5_000 + "]" * 5_000, None),
        ("[" * 30_000 + '\n{"reason": "a", "score": 7}', 7.0),
    ],
    ids=["unclosed brackets", "unclosed objects", "closed brackets", "then a verdict"],
)
def test_replies_nested_past_the_reader_are_unparsable_or_read(
    text: str, expected: float | None
) -> None:
    """A judge can be led to write anything: nesting past what Python's JSON reader takes
    is no verdict (a re-ask), never a RecursionError that made the item ``invalid``."""
    if expected is None:
        with pytest.raises(ReplyUnparsable):
            parse_reply(text, IMPLICIT)
    else:
        assert parse_reply(text, IMPLICIT)["score"].value == expected


def test_value_offsets_point_at_the_score() -> None:
    text = (
        '{"criteria": [{"id": "clear", "reason": "tone is ok", "score": 1},'
        ' {"id": "tone", "score": 2}, {"id": "depth", "score": 3}]}'
    )
    verdicts = parse_reply(text, EXPLICIT)
    for key, value in (("clear", "1"), ("tone", "2"), ("depth", "3")):
        offset = verdicts[key].offset
        assert offset is not None and text[offset] == value


# Messages mode: a pure range, no token scale, and the keys caller-written prompts use.
RANGED = ReplySpec((Slot("score", {}, (0.0, 10.0)),), listed=False, aliases=("result",))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7", 7.0),
        ("0.25", 0.25),
        ('{"score": 9.5}', 9.5),
        ('{"result": 10}', 10.0),
        ('{"steps": [{"description": "d", "conclusion": "c"}], "result": 3}', 3.0),
        ('```json\n{"result": "4.5"}\n```', 4.5),
        ("Reasoning first.\nresult: 6", 6.0),
        ("0", 0.0),
    ],
)
def test_ranged_replies(text: str, expected: float) -> None:
    assert parse_reply(text, RANGED)["score"].value == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"result": 10.5}', "a number from 0 to 10"),
        ("-1", "a number from 0 to 10"),
        ('{"score": "NaN"}', "a number from 0 to 10"),
        ('{"score": null}', "a number from 0 to 10"),
        ('{"grade": 5}', "score"),
        ("I would rather not grade this.", "no JSON"),
    ],
)
def test_unparsable_ranged_replies_say_why(text: str, problem: str) -> None:
    with pytest.raises(ReplyUnparsable, match=problem):
        parse_reply(text, RANGED)
