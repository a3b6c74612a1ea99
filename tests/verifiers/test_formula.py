from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.verifiers.rules.formula import (
    MAX_DEPTH,
    MAX_LENGTH,
    Call,
    Chain,
    FormulaError,
    Name,
    Negate,
    Number,
    Power,
    evaluate,
    parse,
)

VALUES = {"a": 2.0, "b": 3.0, "c": 0.5, "zero": 0.0, "x_1": 10.0, "min": 7.0}

CASES: list[tuple[str, float]] = [
    # (formula, value with VALUES bound)
    ("1", 1.0),
    ("  42  ", 42.0),
    ("3.25", 3.25),
    (".5", 0.5),
    ("5.", 5.0),
    ("1e3", 1000.0),
    ("2.5E-2", 0.025),
    ("1e+2", 100.0),
    ("a", 2.0),
    ("x_1", 10.0),
    ("1 + 2 * 3", 7.0),
    ("(1 + 2) * 3", 9.0),
    ("10 - 4 - 3", 3.0),  # left-associative
    ("16 / 4 / 2", 2.0),
    ("2 * 3 / 4", 1.5),
    ("-2^2", -4.0),  # ^ binds tighter than unary minus
    ("(-2)^2", 4.0),
    ("2^-1", 0.5),
    ("2^3^2", 512.0),  # right-associative
    ("(2^3)^2", 64.0),
    ("2^-2^2", 0.0625),  # 2^(-(2^2))
    ("-a^b", -8.0),
    ("--3", 3.0),
    ("+3", 3.0),
    ("-+-3", 3.0),
    ("2 * -3", -6.0),
    ("2 - -3", 5.0),
    ("a*b - c", 5.5),
    ("0.8*a + 0.2*b", 2.2),
    ("min(a, b)", 2.0),
    ("min(b)", 3.0),
    ("max(a, b, c, 9)", 9.0),
    ("abs(-4.5)", 4.5),
    ("abs(c - a)", 1.5),
    ("clip(a, 0, 1)", 1.0),
    ("clip(-a, 0, 1)", 0.0),
    ("clip(c, 0, 1)", 0.5),
    ("clip(a, 2, 2)", 2.0),
    ("floor(c + 2)", 2.0),
    ("ceil(c)", 1.0),
    ("floor(-c)", -1.0),
    ("sqrt(4) + exp(0)", 3.0),
    ("log(exp(a))", 2.0),
    ("min(a, max(b, 10)) * 2", 4.0),
    ("min", 7.0),  # a component may be named like a function
    ("min(min, 1)", 1.0),
    ("0^0", 1.0),
    ("zero * -1", 0.0),
    ("((((a))))", 2.0),
    ("1e308 * 1", 1e308),
    ("a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a+a", 60.0),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_formula_values(text: str, expected: float) -> None:
    assert evaluate(parse(text), VALUES) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "found end of formula at offset 0"),
        ("   ", "found end of formula at offset 3"),
        ("1 +", "found end of formula at offset 3"),
        ("(1", "expected ')', found end of formula at offset 2"),
        ("1)", "found ')' at offset 1"),
        ("()", "found ')' at offset 1"),
        ("1 2", "found '2' at offset 2"),
        ("a b", "found 'b' at offset 2"),
        ("2a", "found 'a' at offset 1"),
        ("1 ** 2", "found '*' at offset 3"),
        ("a $ b", "unexpected character '$' at offset 2"),
        ("a.b", "unexpected character '.' at offset 1"),
        ("__import__(os)", "unknown function '__import__' at offset 0"),
        ("'a'", 'unexpected character "\'" at offset 0'),
        ("foo(1)", "unknown function 'foo' at offset 0"),
        ("abs(1, 2)", "abs() at offset 0 takes 1 argument(s), got 2"),
        ("clip(1, 2)", "clip() at offset 0 takes 3 argument(s), got 2"),
        ("min()", "found ')' at offset 4"),
        ("max(1,)", "found ')' at offset 6"),
        ("min(1 2)", "expected ')', found '2' at offset 6"),
        ("1e999", "number '1e999' at offset 0 is out of range"),
        ("2 ^", "found end of formula at offset 3"),
        ("é", "unexpected character 'é' at offset 0"),
        ("a\x00", "unexpected character"),
    ],
)
def test_formula_syntax_errors(text: str, message: str) -> None:
    with pytest.raises(FormulaError) as info:
        parse(text)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1 / zero", "division by zero"),
        ("a / (b - 3)", "division by zero"),
        ("(-8)^(1/3)", "is not a real number"),
        ("zero^-1", "is not a real number"),
        ("10^400", "overflow"),
        ("9^9^9", "overflow"),
        ("1e200 * 1e200", "non-finite"),
        ("-1e308 - 1e308", "non-finite"),
        ("clip(a, 1, 0)", "lower bound 1.0 is above upper bound 0.0"),
        ("sqrt(-a)", "sqrt(-2.0) is not a real number"),
        ("log(0)", "log(0.0) is not a real number"),
        ("exp(1000)", "numeric overflow"),
        ("missing + 1", "unknown name 'missing'"),
    ],
)
def test_formula_evaluation_errors(text: str, message: str) -> None:
    expr = parse(text)
    with pytest.raises(FormulaError) as info:
        evaluate(expr, VALUES)
    assert message in str(info.value)


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_non_finite_values_are_rejected(bad: float) -> None:
    with pytest.raises(FormulaError, match="non-finite"):
        evaluate(parse("a + 1"), {"a": bad})


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("1 + 2", set()),
        ("a", {"a"}),
        ("a + b * a", {"a", "b"}),
        ("min(a, max(b, c)) ^ d", {"a", "b", "c", "d"}),
        ("-clip(x, lo, hi)", {"x", "lo", "hi"}),
    ],
)
def test_formula_names(text: str, names: set[str]) -> None:
    assert parse(text).names() == names


def test_tree_shape() -> None:
    assert parse("-2^x") == Negate(Power(Number(2.0), Name("x")))
    assert parse("a - b + 1") == Chain(Name("a"), (("-", Name("b")), ("+", Number(1.0))))
    assert parse("abs(a)") == Call("abs", (Name("a"),))


def test_length_limit() -> None:
    with pytest.raises(FormulaError, match="limit is 1000"):
        parse("1" + "+1" * MAX_LENGTH)


@pytest.mark.parametrize(
    "make",
    [
        lambda n: "(" * n + "1" + ")" * n,
        lambda n: "abs(" * n + "1" + ")" * n,
        lambda n: "2^" * n + "2",
    ],
)
def test_depth_limit(make) -> None:  # type: ignore[no-untyped-def]
    parse(make(MAX_DEPTH))  # the limit itself is fine
    with pytest.raises(FormulaError, match="nests more than 50 levels"):
        parse(make(MAX_DEPTH + 1))
    with pytest.raises(FormulaError):
        parse(make(400))  # hostile input: an error, never a RecursionError


def test_many_signs_do_not_recurse() -> None:
    assert evaluate(parse("-" * 999 + "1"), {}) == -1.0


# --- property tests ---------------------------------------------------------------------

_NAMES = {"p": 1.5, "q": -2.0, "r": 0.0}


def _atoms() -> st.SearchStrategy[str]:
    numbers = st.integers(0, 9).map(lambda n: f"{n}.0")
    return st.one_of(numbers, st.sampled_from(sorted(_NAMES)))


def _combine(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    # Exponents stay integers, even in right-associative chains like "x ^ 2 ^ 3", so that
    # Python never goes complex where we (correctly) refuse; a negative exponent gets a
    # parenthesised base so no chain turns it into a fractional one.
    return st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/"]), inner).map(" ".join),
        st.tuples(inner, st.integers(0, 3)).map(lambda t: f"{t[0]} ^ {t[1]}"),
        st.tuples(inner, st.integers(1, 2)).map(lambda t: f"({t[0]}) ^ -{t[1]}"),
        inner.map(lambda s: f"-{s}"),
        inner.map(lambda s: f"({s})"),
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: f"min({', '.join(xs)})"),
        st.lists(inner, min_size=1, max_size=3).map(lambda xs: f"max({', '.join(xs)})"),
        inner.map(lambda s: f"abs({s})"),
    )


_FORMULAS = st.recursive(_atoms(), _combine, max_leaves=12)


def _python_value(text: str) -> float | None:
    """What Python's own parser and float arithmetic make of ``text`` (``^`` as ``**``)."""
    namespace = {
        "min": lambda *xs: min(xs),  # Python's min(x) wants an iterable; ours takes min(x)
        "max": lambda *xs: max(xs),
        "abs": abs,
        "__builtins__": {},
    }
    try:
        value = eval(text.replace("^", "**"), namespace, dict(_NAMES))  # test oracle only
    except (ZeroDivisionError, OverflowError):
        return None
    if isinstance(value, complex) or not math.isfinite(value):
        return None
    return float(value)


@settings(max_examples=600, deadline=None)
@given(_FORMULAS)
def test_matches_python_arithmetic(text: str) -> None:
    expected = _python_value(text)
    if expected is None:
        with pytest.raises(FormulaError):
            evaluate(parse(text), _NAMES)
    else:
        assert evaluate(parse(text), _NAMES) == expected


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab12.e+-*/^(),  minaxclp$", max_size=40))
def test_arbitrary_text_parses_or_raises_formula_error(text: str) -> None:
    """Garbage in gives a FormulaError or a finite float, never another exception."""
    try:
        expr = parse(text)
        value = evaluate(expr, dict.fromkeys(expr.names(), 1.0))
    except FormulaError:
        return
    assert math.isfinite(value)
