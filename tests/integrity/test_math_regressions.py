"""Every math hack and misreading reported against referee, as a regression table.

(response, gold, params, expected reward)."""

from __future__ import annotations

from typing import Any

import pytest

from referee.verifiers.base import ItemInvalid
from referee.verifiers.math import MathParams, MathVerifier
from referee.verifiers.types import Item

VERIFIER = MathVerifier()

UNIVERSAL = ["\\boxed{1/0}", "\\boxed{\\frac{1}{0}}", "\\boxed{\\log 0}", "#### 1/0"]
ANY_GOLD = ["42", "0", "1/2", "\\sqrt{2}", "\\pi", "2+3i", "50\\%", "30^\\circ", "\\$5"]
PARAMS: list[dict[str, Any]] = [
    {},
    {"strict": True},
    {"tolerance": "relative", "rel_tol": 0.5},
    {"tolerance": "exact"},
    {"percent": "ratio"},
    {"rounded_predictions": True},
]

CASES: list[tuple[str, str, dict[str, Any], float]] = [
    *[(r, g, p, 0.0) for r in UNIVERSAL for g in ANY_GOLD for p in PARAMS],
    ("\\boxed{(1/0, 1/0)}", "(1,2)", {}, 0.0),
    ("\\boxed{x=1/0}", "x=3", {}, 0.0),
    ("\\boxed{\\{1/0, 1/0\\}}", "\\{1,2\\}", {}, 0.0),
    (
        "\\boxed{\\begin{pmatrix}1/0\\\\1/0\\end{pmatrix}}",
        "\\begin{pmatrix}1\\\\2\\end{pmatrix}",
        {},
        0.0,
    ),
    ("\\boxed{\\infty}", "5", {}, 0.0),
    ("\\boxed{\\infty}", "\\infty", {}, 1.0),
    ("\\boxed{(-\\infty, 3)}", "(-\\infty, 3)", {}, 1.0),
    # fragments of words and constructs
    ("AZYUK2A", "2", {}, 0.0),
    ("so it is \\frac{1+\\sqrt{5}}{2}", "2", {}, 0.0),
    ("\\sum_{k=0}^n", "0", {}, 0.0),
    ("11 7/6", "7/6", {}, 0.0),
    ("\\(\\frac{3}{4}\\)", "4", {}, 0.0),
    ("\\(\\frac{3}{4}\\)", "\\frac{3}{4}", {}, 1.0),
    ("\\boxed{0,111}", "111", {}, 0.0),
    ("\\boxed{0,111}", "0.111", {}, 1.0),
    ("\\boxed{1.5708}", "\\frac{\\pi}{2}", {}, 0.0),
    ("\\boxed{1.5708}", "\\frac{\\pi}{2}", {"rounded_predictions": True}, 1.0),
    # presentation
    ("so the area is \\[ \\frac{3}{4} \\]", "\\frac{3}{4}", {}, 1.0),
    ("thus $$x = 5$$", "5", {}, 1.0),
    ("\\boxed{3} and finally \\boxed{4", "4", {}, 0.0),
    ("\\boxed{3} and finally \\boxed{4", "3", {}, 0.0),
    ("\\boxed{3} no wait \\boxed{4}", "4", {}, 1.0),
    ("\\boxed{3} no wait \\boxed{4}", "4", {"strict": True}, 0.0),
    ("-7", "-7", {}, 1.0),
    ("Final answer: 12", "12", {}, 1.0),
    # labelled golds and joined answers
    ("\\boxed{(3,2)}", "(p,q)=(3,2)", {}, 1.0),
    ("\\boxed{1}", "|AB|=1", {}, 1.0),
    ("\\boxed{3x-2}", "f(x)=3x-2", {}, 1.0),
    ("\\boxed{f(x)=3x-2}", "3x-2", {}, 1.0),
    ("\\boxed{x=-3 \\text{ or } x=2}", "-3, 2", {}, 1.0),
    ("\\boxed{-3, 2}", "x=-3 \\text{ or } x=2", {}, 1.0),
    ("\\boxed{2 \\text{ and } -3}", "-3, 2", {}, 1.0),
    ("\\boxed{\\log 2}", "\\ln 2", {}, 1.0),
    ("\\boxed{\\varnothing}", "\\emptyset", {}, 1.0),
    ("\\boxed{10\\,\\mathrm{cm}}", "10", {}, 1.0),
    ("\\boxed{1,234}", "1234", {}, 1.0),
    ("\\boxed{0,5}", "0.5", {}, 1.0),
    # tiny but genuine differences are differences
    ("\\boxed{e^{-100}}", "0", {}, 0.0),
    ("\\boxed{1+e^{-100}}", "1", {}, 0.0),
    ("\\boxed{x+10^{-40}}", "x", {}, 0.0),
    ("\\boxed{x \\approx 0}", "0", {}, 0.0),
    ("\\boxed{2(3)}", "6", {}, 1.0),
]


@pytest.mark.parametrize(("response", "gold", "params", "expected"), CASES)
def test_regression(response: str, gold: str, params: dict[str, Any], expected: float) -> None:
    item = Item(verifier="math", response=response, reference=gold, params=params)
    try:
        reward = VERIFIER.check(item, MathParams(**params)).reward
    except ItemInvalid:
        reward = None
    assert reward == expected


FLAGS = [
    ("\\boxed{1} or \\boxed{2}", "2", ["conflicting_answers"]),
    ("\\boxed{2", "2", ["unclosed_box"]),
    ("\\boxed{1/0}", "2", ["undefined_answer"]),
    ("\\boxed{10 cm}", "10", ["unit_drift"]),
    ("\\boxed{10\\%}", "10", ["format_drift"]),
    ("\\boxed{10}", "10", None),
]


@pytest.mark.parametrize(("response", "gold", "flags"), FLAGS)
def test_flags(response: str, gold: str, flags: list[str] | None) -> None:
    item = Item(verifier="math", response=response, reference=gold)
    assert VERIFIER.check(item, MathParams()).details.get("flags") == flags
