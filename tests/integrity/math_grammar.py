"""Grammars for the math hack search: gold answers with the exact values they stand for,
and degenerate responses a policy could try on any gold.

A `Gold` carries its LaTeX and its *readings*: the exact values (or structures of exact
values) a correct answer may denote under the verifier's documented default policies
(``50\\%`` reads as 50 or 1/2; an open interval ``(1, 2)`` is also the ordered pair; ``x =
3`` also answers 3). Two golds are interchangeable when their readings meet; the hack
search only pairs golds that are not.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy
from hypothesis import strategies as st

Reading = Any


@dataclass(frozen=True)
class Gold:
    latex: str
    readings: frozenset[Reading]
    decimal: tuple[Fraction, int] | None = None
    """For a decimal gold: its value and number of fractional digits (it was rounded)."""


def interchangeable(a: Gold, b: Gold) -> bool:
    """Whether one answer may rightly match both golds under the default policies."""
    if a.readings & b.readings:
        return True
    return _rounds_to(a, b) or _rounds_to(b, a)


def _rounds_to(decimal: Gold, other: Gold) -> bool:
    """A decimal gold accepts exact values that round or truncate to it (``0.33`` ~ 1/3)."""
    if decimal.decimal is None:
        return False
    value, digits = decimal.decimal
    unit = sympy.Rational(1, 10**digits)
    target = sympy.Rational(value.numerator, value.denominator)
    for reading in other.readings:
        real = isinstance(reading, sympy.Expr) and reading.is_real and reading.is_number
        if real and abs(reading - target) < unit:
            return True
    return False


def _num(value: Any) -> sympy.Expr:
    return sympy.nsimplify(value) if isinstance(value, float) else sympy.sympify(value)


def _scalar(latex: str, value: Any) -> Gold:
    return Gold(latex, frozenset({_num(value)}))


small = st.integers(min_value=-50, max_value=50)
positive = st.integers(min_value=1, max_value=30)


@st.composite
def integers(draw: st.DrawFn) -> Gold:
    n = draw(st.integers(min_value=-10_000, max_value=10_000))
    return _scalar(str(n), n)


@st.composite
def fractions(draw: st.DrawFn) -> Gold:
    p, q = draw(small), draw(st.integers(min_value=2, max_value=40))
    value = Fraction(p, q)
    latex = f"\\frac{{{value.numerator}}}{{{value.denominator}}}"
    if value.denominator == 1:
        latex = str(value.numerator)
    if value < 0:
        latex = f"-\\frac{{{-value.numerator}}}{{{value.denominator}}}"
    return _scalar(latex, sympy.Rational(value.numerator, value.denominator))


@st.composite
def decimals(draw: st.DrawFn) -> Gold:
    digits = draw(st.integers(min_value=1, max_value=4))
    scaled = draw(st.integers(min_value=-99_999, max_value=99_999))
    value = Fraction(scaled, 10**digits)
    whole, fraction = divmod(abs(scaled), 10**digits)
    text = f"{'-' if scaled < 0 else ''}{whole}.{fraction:0{digits}d}"
    exact = sympy.Rational(value.numerator, value.denominator)
    return Gold(text, frozenset({exact}), decimal=(value, digits))


@st.composite
def radicals(draw: st.DrawFn) -> Gold:
    a = draw(st.integers(min_value=1, max_value=9))
    b = draw(st.sampled_from([2, 3, 5, 6, 7, 10, 11]))
    sign = draw(st.sampled_from(["", "-"]))
    coeff = "" if a == 1 else str(a)
    value = (-1 if sign else 1) * a * sympy.sqrt(b)
    return _scalar(f"{sign}{coeff}\\sqrt{{{b}}}", value)


@st.composite
def transcendental(draw: st.DrawFn) -> Gold:
    k = draw(st.integers(min_value=1, max_value=12))
    form = draw(st.sampled_from(["pi", "frac_pi", "e", "ln"]))
    if form == "pi":
        return _scalar(f"{k}\\pi", k * sympy.pi)
    if form == "frac_pi":
        return _scalar(f"\\frac{{\\pi}}{{{k + 1}}}", sympy.pi / (k + 1))
    if form == "e":
        return _scalar(f"e^{{{k}}}", sympy.E**k)
    return _scalar(f"\\ln {k + 1}", sympy.log(k + 1))


@st.composite
def complexes(draw: st.DrawFn) -> Gold:
    a, b = draw(small), draw(st.integers(min_value=1, max_value=20))
    sign = draw(st.sampled_from(["+", "-"]))
    imag = b if sign == "+" else -b
    return _scalar(f"{a}{sign}{b}i", a + imag * sympy.I)


@st.composite
def percents(draw: st.DrawFn) -> Gold:
    p = draw(st.integers(min_value=1, max_value=300))
    return Gold(f"{p}\\%", frozenset({sympy.Integer(p), sympy.Rational(p, 100)}))


def _values(draw: st.DrawFn, n: int) -> list[int]:
    return draw(st.lists(small, min_size=n, max_size=n))


@st.composite
def sets(draw: st.DrawFn) -> Gold:
    items = draw(st.lists(small, min_size=2, max_size=4, unique=True))
    readings = frozenset({frozenset(sympy.Integer(i) for i in items)})
    return Gold("\\{" + ", ".join(map(str, items)) + "\\}", readings)


@st.composite
def tuples(draw: st.DrawFn) -> Gold:
    items = _values(draw, draw(st.integers(min_value=2, max_value=4)))
    readings: set[Reading] = {("tuple", *map(sympy.Integer, items))}
    if len(items) == 2 and items[0] < items[1]:
        readings.add(("interval", *map(sympy.Integer, items), True, True))
    return Gold("(" + ", ".join(map(str, items)) + ")", frozenset(readings))


@st.composite
def intervals(draw: st.DrawFn) -> Gold:
    lo = draw(small)
    hi = lo + draw(positive)
    left, right = draw(st.sampled_from("[(")), draw(st.sampled_from("])"))
    reading: Reading = ("interval", sympy.Integer(lo), sympy.Integer(hi), left == "(", right == ")")
    readings = {reading}
    if left == "(" and right == ")":
        readings.add(("tuple", sympy.Integer(lo), sympy.Integer(hi)))
    return Gold(f"{left}{lo}, {hi}{right}", frozenset(readings))


@st.composite
def rays(draw: st.DrawFn) -> Gold:
    at = draw(small)
    if draw(st.booleans()):
        return Gold(f"(-\\infty, {at})", frozenset({("ray", "-", sympy.Integer(at))}))
    return Gold(f"[{at}, \\infty)", frozenset({("ray", "+", sympy.Integer(at))}))


@st.composite
def equations(draw: st.DrawFn) -> Gold:
    var = draw(st.sampled_from(["x", "y", "n"]))
    value = draw(small)
    return Gold(f"{var} = {value}", frozenset({sympy.Integer(value)}))


@st.composite
def matrices(draw: st.DrawFn) -> Gold:
    a, b, c, d = _values(draw, 4)
    latex = f"\\begin{{pmatrix}} {a} & {b} \\\\ {c} & {d} \\end{{pmatrix}}"
    return Gold(latex, frozenset({("matrix", a, b, c, d)}))


@st.composite
def polynomials(draw: st.DrawFn) -> Gold:
    a, b = draw(st.integers(min_value=1, max_value=9)), draw(small)
    x = sympy.Symbol("x")
    return _scalar(f"{a}x^2 + {b}" if b >= 0 else f"{a}x^2 - {-b}", a * x**2 + b)


golds = st.one_of(
    integers(),
    fractions(),
    decimals(),
    radicals(),
    transcendental(),
    complexes(),
    percents(),
    sets(),
    tuples(),
    intervals(),
    rays(),
    equations(),
    matrices(),
    polynomials(),
)

# Responses that are right for nothing, or that try to be right for everything.
DEGENERATE: tuple[str, ...] = (
    "1/0", "\\frac{1}{0}", "-\\frac{1}{0}", "0/0", "\\frac{0}{0}", "\\log 0", "\\ln(0)",
    "0^{-1}", "\\tan(\\pi/2)", "\\tan\\frac{\\pi}{2}", "\\cot 0", "\\csc 0", "\\sec(\\pi/2)",
    "\\infty", "-\\infty", "\\pm\\infty", "+\\infty", "oo", "zoo", "nan", "NaN",
    "\\text{NaN}", "\\text{undefined}", "undefined", "\\infty - \\infty", "0 \\cdot \\infty",
    "\\frac{\\infty}{\\infty}", "1^{\\infty}", "(1/0, 1/0)", "\\{1/0\\}", "x = 1/0",
    "[1/0, 1/0]", "(-\\infty, \\infty)", "\\mathbb{R}", "\\mathbb{C}", "\\emptyset",
    "\\text{all real numbers}", "\\text{any}", "x", "n", "*", "?", "\\ldots", "\\cdots",
    "\\forall x", "\\text{anything}", "", " ", "{}", "\\{\\}", "()", "[]",
    "0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10", "\\pm x",
    "x \\approx 0", "\\approx", "x \\in \\mathbb{R}", "x > 0", "x \\ne 0",
    "\\boxed{1",
    "\\lim_{x \\to 0} \\frac{1}{x}", "\\sum_{k=1}^{\\infty} k", "\\int_0^\\infty 1\\, dx",
    "\\begin{pmatrix} 1/0 & 1/0 \\\\ 1/0 & 1/0 \\end{pmatrix}",
    "\\sin(1/0)", "e^{1/0}", "\\log(-1)", "\\frac{x}{0}", "\\infty i",
)  # fmt: skip


def combinations(a: Gold, b: Gold) -> list[str]:
    """Responses built from both golds: an honest answer must commit to one of them."""
    g, h = a.latex, b.latex
    return [
        f"{g}, {h}",
        f"{g} \\text{{ or }} {h}",
        f"{g} or {h}",
        f"{g} and {h}",
        f"\\{{{g}, {h}\\}}",
        f"({g}, {h})",
        f"[{g}, {h}]",
        f"{g} = {h}",
        f"{g} \\approx {h}",
        f"x = {g} \\text{{ or }} x = {h}",
        f"\\pm {g}",
        f"{g} \\pm {h}",
        f"{g} \\lor {h}",
        f"{g} \\le x \\le {h}",
        f"{g} + 0 \\cdot \\infty",
        f"{g} + \\frac{{1}}{{0}}",
        f"\\frac{{{g}}}{{0}}",
        f"{g}^{{\\infty}}",
        f"{g}, {h}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9",
        f"\\boxed{{{g}}} \\boxed{{{h}",
        f"{g} \\text{{ (or maybe }} {h})",
        f"{g}\\text{{ if }} x > 0 \\text{{ else }} {h}",
        f"x = {g} = {h}",  # a chain: its sides must agree
        f"{g} \\text{{ or more than }} {h}",
        f"x = {g}, y = {h}",  # a point's coordinates
        f"\\frac{{{g} \\pm {h}}}{{1}}",  # a sign inside a fraction
    ]


def wrapped(answer: str) -> list[str]:
    """The ways a response may present ``answer``."""
    return [f"\\boxed{{{answer}}}", f"The answer is ${answer}$.", f"#### {answer}", answer]
