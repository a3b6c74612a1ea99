"""The math hack search: no response is right for two golds that are not interchangeable.

Golds come from a grammar (integers, fractions, decimals, radicals, pi/e/log expressions,
complex numbers, percentages, sets, tuples, intervals, rays, equations, matrices,
polynomials); responses from a grammar of degenerate answers (undefined, infinite, NaN,
empty, text, wildcards, every candidate listed, unclosed and nested boxes, unicode
look-alikes, huge lists, ``\\pm``, ``\\approx``, number words) and of answers built from
both golds at once (lists, chains, coordinates, a sign inside a fraction...). Every
response is tried in every presentation (boxed, "the answer is", GSM8K ``####``, bare)
under the default params and under the ones that loosen comparison (percent, degrees,
relative tolerance).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.verifiers.base import ItemInvalid
from referee.verifiers.math import MathParams, MathVerifier
from referee.verifiers.types import Item
from tests.integrity import math_grammar as grammar
from tests.integrity.math_grammar import (
    DEGENERATE,
    Gold,
    combinations,
    golds,
    interchangeable,
    wrapped,
)

VERIFIER = MathVerifier()
PARAMS: list[dict[str, Any]] = [
    {},
    {"strict": True},
    {"percent": "either", "degrees": "either"},
    {"tolerance": "relative", "rel_tol": 1e-9},
]


def accepts(response: str, gold: str, params: dict[str, Any]) -> bool:
    item = Item(verifier="math", response=response, reference=gold, params=params)
    try:
        return VERIFIER.check(item, MathParams(**params)).reward == 1.0
    except ItemInvalid:
        return False


def double_winners(a: Gold, b: Gold, answers: list[str], params: dict[str, Any]) -> list[str]:
    return [
        response
        for answer in answers
        for response in wrapped(answer)
        if accepts(response, a.latex, params) and accepts(response, b.latex, params)
    ]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=golds, b=golds, params=st.sampled_from(PARAMS))
def test_no_response_is_right_for_two_different_golds(
    a: Gold, b: Gold, params: dict[str, Any]
) -> None:
    if interchangeable(a, b):
        return
    answers = [*combinations(a, b), *combinations(b, a)]
    winners = double_winners(a, b, answers, params)
    assert not winners, f"{winners[:3]} right for both {a.latex!r} and {b.latex!r}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(gold=golds, params=st.sampled_from(PARAMS))
def test_no_degenerate_answer_scores(gold: Gold, params: dict[str, Any]) -> None:
    hits = [
        response
        for answer in DEGENERATE
        for response in wrapped(answer)
        if accepts(response, gold.latex, params)
        # an infinite gold is matched by its own infinity, by an explicit rule
        and not (gold.latex in answer and "\\infty" in gold.latex)
    ]
    assert not hits, f"{hits[:5]} accepted for {gold.latex!r}"


@settings(max_examples=80, deadline=None)
@given(gold=golds)
def test_every_gold_accepts_itself_in_every_presentation(gold: Gold) -> None:
    for response in wrapped(gold.latex):
        assert accepts(response, gold.latex, {}), (response, gold.latex)


NOISE = [
    lambda s: f" {s} ",
    lambda s: s.replace(", ", ",").replace(" = ", "="),
    lambda s: s.replace("(", "\\left(").replace(")", "\\right)"),
    lambda s: f"\\displaystyle {s}",
    lambda s: s.replace("\\frac", "\\dfrac"),
    lambda s: f"${s}$",
    lambda s: s.replace(" ", "\\,"),
]


@settings(max_examples=80, deadline=None)
@given(a=golds, b=golds, noise=st.sampled_from(NOISE))
def test_verdicts_are_stable_under_formatting_noise(a: Gold, b: Gold, noise: Any) -> None:
    for gold, answer in ((a, a.latex), (a, b.latex)):
        plain = accepts(f"\\boxed{{{answer}}}", gold.latex, {})
        noisy = accepts(f"\\boxed{{{noise(answer)}}}", gold.latex, {})
        assert plain == noisy, (answer, noise(answer), gold.latex)


SYMMETRIC = st.one_of(
    grammar.integers(),
    grammar.fractions(),
    grammar.radicals(),
    grammar.transcendental(),
    grammar.complexes(),
    grammar.sets(),
    grammar.matrices(),
    grammar.polynomials(),
)


@settings(max_examples=80, deadline=None)
@given(a=SYMMETRIC, b=SYMMETRIC)
def test_equivalence_is_symmetric_for_exact_values(a: Gold, b: Gold) -> None:
    forward = accepts(f"\\boxed{{{b.latex}}}", a.latex, {})
    backward = accepts(f"\\boxed{{{a.latex}}}", b.latex, {})
    assert forward == backward, (a.latex, b.latex)


REWRITES = [
    ("2\\sqrt{2}", "\\sqrt{8}"),
    ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}"),
    ("\\frac{\\sqrt{6}+\\sqrt{2}}{4}", "\\cos\\frac{\\pi}{12}"),
    ("\\ln 6", "\\ln 2 + \\ln 3"),
    ("(x+1)^2", "x^2 + 2x + 1"),
    ("\\frac{1}{x-1} - \\frac{1}{x+1}", "\\frac{2}{x^2-1}"),
    ("\\{1, 2, 3\\}", "\\{3, 2, 1\\}"),
    ("e^{i\\pi}", "-1"),
    ("\\sin^2 x + \\cos^2 x", "1"),
    ("\\binom{5}{2}", "10"),
]


@pytest.mark.parametrize(("a", "b"), REWRITES)
def test_equivalent_rewrites_match_both_ways(a: str, b: str) -> None:
    assert accepts(f"\\boxed{{{b}}}", a, {})
    assert accepts(f"\\boxed{{{a}}}", b, {})
