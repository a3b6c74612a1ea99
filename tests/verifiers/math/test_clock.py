"""Times of day (`verifiers.math.clock`): which golds are times, and when two agree."""

from __future__ import annotations

import itertools

import pytest

from referee.verifiers import Item
from referee.verifiers.base import ItemInvalid
from referee.verifiers.math.clock import Clock, clock_gold, read_clock, same_time
from referee.verifiers.math.verifier import MathParams, MathVerifier


@pytest.mark.parametrize(
    ("text", "clock"),
    [
        ("4:30", Clock(4, 30, 0, "")),
        ("04:30", Clock(4, 30, 0, "")),
        ("16:45:30", Clock(16, 45, 30, "")),
        ("12{:}00", Clock(12, 0, 0, "")),
        ("4:30 p.m", Clock(4, 30, 0, "p")),
        ("9:00 AM", Clock(9, 0, 0, "a")),
        ("9:00\\,am", Clock(9, 0, 0, "a")),
        ("25:00", None),  # no such hour
        ("0:30 pm", None),  # no hour 0 on a 12-hour clock
        ("13:00 pm", None),
        ("4:60", None),
        ("4:3", None),
        ("2:5", None),
        ("x:30", None),
    ],
)
def test_read_clock(text: str, clock: Clock | None) -> None:
    assert read_clock(text) == clock


@pytest.mark.parametrize(
    ("gold", "is_time"),
    [
        ("12:00", True),  # 12/0 is no ratio
        ("3:05", True),  # a leading zero
        ("4:30", True),  # shares a factor: no ratio in lowest terms
        ("10:15", True),
        ("4:30 p.m", True),
        ("16:45:30", True),
        ("7{:}19", True),
        ("3:10", False),  # a ratio in lowest terms, as before
        ("7:19", False),
        ("2:5", False),
    ],
)
def test_which_golds_are_times(gold: str, is_time: bool) -> None:
    assert (clock_gold(gold) is not None) is is_time


GOLDS = ["12:00", "12:00 a.m", "12:00 p.m", "4:30", "4:30 a.m", "4:30 p.m", "16:30", "3:05"]
ANSWERS = [
    *GOLDS,
    "0:00",
    "00:00",
    "24:00",
    "4:30 pm",
    "16:30:00",
    "3:05 p.m",
    "15:05",
    "0:30",
    "12:30 a.m",
]


def _meanings(gold: Clock) -> set[tuple[int, int, int]]:
    """The times of day a gold may mean: a bare ``4:30`` is 4:30 or 16:30."""
    if gold.meridiem:
        return {gold.day_minutes}
    readings = {gold.written}
    if 1 <= gold.hour <= 12:
        readings |= {Clock(gold.hour, gold.minute, gold.second, m).day_minutes for m in "ap"}
    return readings


def test_no_answer_is_right_for_two_golds_that_cannot_be_one_time() -> None:
    for a, b in itertools.combinations(GOLDS, 2):
        gold_a, gold_b = clock_gold(a), clock_gold(b)
        assert gold_a is not None and gold_b is not None
        if _meanings(gold_a) & _meanings(gold_b):
            continue  # "16:30" and "4:30 p.m." are one time; "4:30" may be either
        for text in ANSWERS:
            answer = read_clock(text)
            assert answer is not None
            assert not (same_time(gold_a, answer) and same_time(gold_b, answer)), (a, b, text)


def test_a_time_gold_is_never_invalid() -> None:
    verifier = MathVerifier()
    for gold in GOLDS:
        item = Item(verifier="math", response=f"\\boxed{{{gold}}}", reference=gold)
        try:
            assert verifier.check(item, MathParams()).reward == 1.0, gold
        except ItemInvalid as exc:  # pragma: no cover - the failure this test is for
            pytest.fail(f"{gold}: {exc}")
