"""Decide whether a predicted answer equals the gold one, and name the rule that decided.

The gold answer decides the kind of comparison; the asymmetries are deliberate:

- undefined and infinite values: a prediction that is undefined (``1/0``, ``\\log 0``,
  ``0/0``: sympy's zoo and nan) never equals anything; an infinite one equals only the same
  infinity in the gold (``\\infty``, ``-\\infty``; rule ``infinity``). This holds inside
  every structure (tuples, sets, intervals, equations, matrices).
- numbers: exact rationals compare exactly. Tolerance (policy ``digits``, the default) is
  tied to the digits written: a decimal *gold* with k digits accepts an exact prediction
  whose value does not end within k digits when it is within one unit of the gold's last
  digit (gold 0.33 accepts 1/3: the gold was written rounded). The reverse, a decimal
  *prediction* for an exact gold whose expansion does not end (``1.5708`` for ``\\pi/2``,
  ``0.333`` for 1/3), is accepted only with ``rounded_predictions`` (off by default), and
  then needs ``min_sig_digits`` significant digits. Two terminating values must be equal
  (0.125 != 0.13, 0.5 != 0.49). ``exact`` turns tolerance off; ``relative`` uses
  ``rel_tol``.
- expressions: equal when they are identical after sympy's automatic simplification, or
  when their difference evaluates to zero: sympy's precision-tracking ``evalf`` finds no
  significant digit in it at 30 digits (a true cancellation), while a tiny but genuine
  difference (``1 + e^{-100}`` vs ``1``) keeps its digits and is unequal. Differences
  below about 10^-130 relative are beyond evalf's reach and count as zero. With variables:
  the same test at five random points (mixed signs), at least three of them defined.
- sets (``\\{..\\}`` or a bare list ``a, b``) compare without order; tuples and lists in order;
  a gold singleton accepts the bare element.
- intervals compare endpoints and open/closed ends (``[2,5) != [2,5]``); a two-element
  ``(a,b)`` is an interval or an ordered pair and compares element-wise either way.
  Unions compare as sets. A gold inequality accepts an interval (or union) equal to its
  solution set, and a gold interval accepts an inequality whose solution set it is.
- inequalities: same variables and same solution set (``x>4 != x<4``).
- equations: ``x = 2`` vs ``2`` either way (the assignment's right side is compared);
  two assignments need the same variable (``a=3 != b=3``); general equations are equal
  when one is a nonzero constant multiple of the other (``y=2x-3`` vs ``4x-2y=6``).
- matrices: same shape, equal entries; a column or row vector accepts a tuple.
- complex numbers: ``i`` is the imaginary unit when it is the only symbol.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import sympy

from referee.verifiers.math.fastpath import Number
from referee.verifiers.math.normalization import Normalized
from referee.verifiers.math.parsing import (
    Equation,
    Interval,
    Node,
    Scalar,
    Seq,
    SympyObject,
    Union,
)

NUMERIC_DIGITS = 30
MAX_OPS = 400


@dataclass(frozen=True)
class Policy:
    tolerance: str = "digits"  # "digits" | "exact" | "relative"
    rel_tol: float = 1e-6
    min_sig_digits: int = 3
    rounded_predictions: bool = False
    percent: str = "either"  # "either" | "strip" | "ratio" | "exact"
    degrees: str = "either"  # "either" | "strip"
    money: str = "strip"  # "strip" | "exact"
    complex_i: bool = True


@dataclass(frozen=True)
class Side:
    node: Node
    norm: Normalized


Rule = str | None


def compare(gold: Side, pred: Side, policy: Policy) -> Rule:
    """The rule that made ``pred`` equal ``gold``, or None when they differ."""
    if policy.percent == "exact" and gold.norm.percent != pred.norm.percent:
        return None
    if policy.money == "exact" and gold.norm.money != pred.norm.money:
        return None
    gold_alts = _alternatives(gold, policy)
    pred_alts = _alternatives(pred, policy)
    for g_node, g_rule in gold_alts:
        for p_node, p_rule in pred_alts:
            rule = node_equal(g_node, p_node, policy)
            if rule:
                extra = [r for r in (g_rule, p_rule) if r]
                return "+".join([rule, *extra])
    return None


def _alternatives(side: Side, policy: Policy) -> list[tuple[Node, str]]:
    """The readings of a side under the percent and degree policies."""
    node = side.node
    if not isinstance(node, Scalar) or not (side.norm.percent or side.norm.degree):
        return [(node, "")]
    alts: list[tuple[Node, str]] = []
    if side.norm.percent:
        if policy.percent in ("either", "strip", "exact"):
            alts.append((node, "percent_as_number"))
        if policy.percent in ("either", "ratio"):
            alts.append(
                (_scale(node, Fraction(1, 100), sympy.Rational(1, 100)), "percent_as_ratio")
            )
    if side.norm.degree:
        alts = alts or [(node, "")]
        extra: list[tuple[Node, str]] = []
        for alt, rule in alts:
            extra.append((alt, rule or "degrees_as_number"))
            if policy.degrees == "either":
                radians = _scale(alt, None, sympy.pi / 180)
                extra.append((radians, "degrees_as_radians"))
        alts = extra
    return alts


def _scale(node: Node, exact: Fraction | None, factor: Any) -> Node:
    assert isinstance(node, Scalar)
    if exact is not None and node.number is not None:
        number = node.number
        decimals = None if number.decimals is None else number.decimals + 2
        return Scalar(node.text, number=Number(number.value * exact, decimals, number.significant))
    return Scalar(node.text, expr=node.sympy() * factor)


def node_equal(gold: Node, pred: Node, policy: Policy) -> Rule:
    try:
        return _node_equal(gold, pred, policy)
    except (MemoryError, RecursionError):
        raise
    except Exception:  # noqa: BLE001 - sympy raises many types on incomparable objects
        return None


def _node_equal(gold: Node, pred: Node, policy: Policy) -> Rule:
    gold, pred = _lift(gold), _lift(pred)
    if isinstance(gold, Scalar) and isinstance(pred, Scalar):
        return scalar_equal(gold, pred, policy)
    if isinstance(gold, Equation):
        return _equation_equal(gold, pred, policy)
    if isinstance(pred, Equation):
        if _is_symbol_name(pred.lhs) and not isinstance(gold, SympyObject | Union):
            rule = node_equal(gold, pred.rhs, policy)
            return f"pred_assignment:{rule}" if rule else None
        return None
    if isinstance(gold, Seq):
        return _seq_equal(gold, pred, policy)
    if isinstance(gold, Interval):
        return _interval_equal(gold, pred, policy)
    if isinstance(gold, Union):
        return _set_equal(gold, pred, policy)
    if isinstance(gold, SympyObject):
        return _object_equal(gold.value, pred, policy)
    singleton = isinstance(pred, Seq) and pred.kind in ("set", "bare") and len(pred.items) == 1
    if isinstance(gold, Scalar) and isinstance(pred, Seq) and singleton:
        return node_equal(gold, pred.items[0], policy)
    return None


def _lift(node: Node) -> Node:
    """sympy finite sets and tuples become `Seq` so they compare element-wise."""
    if isinstance(node, SympyObject):
        value = node.value
        if isinstance(value, sympy.FiniteSet):
            return Seq("set", tuple(_wrap(v) for v in value.args))
        if isinstance(value, sympy.Tuple):
            return Seq("tuple", tuple(_wrap(v) for v in value.args))
    return node


def _wrap(value: Any) -> Node:
    if isinstance(value, sympy.Expr):
        return Scalar(str(value) if value.is_Atom else "", expr=value)
    return SympyObject(value)


# --- numbers and expressions ---------------------------------------------------------------


def scalar_equal(gold: Scalar, pred: Scalar, policy: Policy) -> Rule:
    if gold.number is not None and pred.number is not None:
        return _number_equal(gold.number, pred.number, policy)
    g = _prepare(gold.sympy(), policy)
    p = _prepare(pred.sympy(), policy)
    return expr_equal(g, p, policy, gold.number, pred.number)


def _terminates(value: Fraction, decimals: int | None = None) -> bool:
    """Whether ``value`` has a finite decimal expansion (within ``decimals`` digits)."""
    den = value.denominator
    for prime in (2, 5):
        while den % prime == 0:
            den //= prime
    if den != 1:
        return False
    if decimals is None:
        return True
    return bool((value * 10**decimals).denominator == 1)


def _number_equal(gold: Number, pred: Number, policy: Policy) -> Rule:
    if gold.value == pred.value:
        return "exact"
    if policy.tolerance == "exact":
        return None
    if policy.tolerance == "relative":
        scale = max(abs(gold.value), abs(pred.value))
        return (
            "relative_tolerance"
            if abs(gold.value - pred.value) <= scale * Fraction(policy.rel_tol)
            else None
        )
    if (
        policy.rounded_predictions
        and pred.decimals is not None
        and gold.decimals is None
        and not _terminates(gold.value)
        and (pred.significant or 0) >= policy.min_sig_digits
        and _approximates(gold.value, pred.value, pred.decimals)
    ):
        return "rounded_prediction"
    if (
        gold.decimals is not None
        and pred.decimals is None
        and not _terminates(pred.value)
        and _approximates(pred.value, gold.value, gold.decimals)
    ):
        return "rounded_gold"
    return None


def _approximates(exact: Any, approx: Fraction, decimals: int) -> bool:
    """Whether ``approx`` is ``exact`` rounded (half away from zero) or truncated to
    ``decimals`` fractional digits. ``exact`` is a Fraction or a sympy number."""
    scaled_approx = approx * 10**decimals
    if scaled_approx.denominator != 1:
        return False
    target = int(scaled_approx)
    if isinstance(exact, Fraction):
        scaled = exact * 10**decimals
        sign = -1 if scaled < 0 else 1
        magnitude = abs(scaled)
        rounded = sign * math.floor(magnitude + Fraction(1, 2))
        truncated = sign * math.floor(magnitude)
    else:
        scaled = sympy.Float(exact * 10**decimals, NUMERIC_DIGITS + decimals)
        sign = -1 if scaled < 0 else 1
        magnitude = abs(scaled)
        rounded = sign * int(sympy.floor(magnitude + sympy.Rational(1, 2)))
        truncated = sign * int(sympy.floor(magnitude))
    return target in (rounded, truncated)


def _prepare(expr: Any, policy: Policy) -> Any:
    if not isinstance(expr, sympy.Basic):
        return expr
    floats = expr.atoms(sympy.Float)
    if floats:
        expr = expr.xreplace({f: sympy.Rational(str(f)) for f in floats})
    if policy.complex_i:
        symbols = expr.free_symbols
        if symbols and all(s.name in ("i", "j") for s in symbols) and len(symbols) == 1:
            expr = expr.xreplace({next(iter(symbols)): sympy.I})
    return expr


def expr_equal(
    g: Any, p: Any, policy: Policy, g_num: Number | None = None, p_num: Number | None = None
) -> Rule:
    if not isinstance(g, sympy.Expr) or not isinstance(p, sympy.Expr):
        return None
    if not_finite(g) or not_finite(p):
        return "infinity" if g in _INFINITIES and g == p else None
    if g == p:
        return "symbolic_exact"
    if g.is_Rational and p.is_Rational:
        return None  # distinct rationals
    free = g.free_symbols | p.free_symbols
    if not free:
        return _constant_equal(g, p, policy, g_num, p_num)
    return _identity(g, p, sorted(free, key=lambda s: s.name))


_INFINITIES = (sympy.oo, -sympy.oo)
_NOT_FINITE = (sympy.zoo, sympy.nan, sympy.oo, sympy.AccumBounds)


def not_finite(expr: Any) -> bool:
    """True when ``expr`` is, or evaluates to, something that is not a finite number:
    infinite, undefined (zoo, nan) or a range (AccumBounds), anywhere inside it. An
    expression sympy fails to evaluate (``\\cot 0`` raises inside mpmath) counts as not
    finite: the caller then never calls it equal to anything."""
    try:
        return _not_finite(expr)
    except (MemoryError, RecursionError):
        raise
    except Exception:  # noqa: BLE001 - sympy and mpmath raise many types here
        return True


def _not_finite(expr: Any) -> bool:
    if expr.has(*_NOT_FINITE) or expr.has(-sympy.oo):
        return True
    if expr.free_symbols or expr.is_Rational:
        return False
    # No shortcut through sympy's assumptions: on unevaluated expressions (the parsers
    # build them) `is_finite` can answer True for 1/0, depending on the hash seed.
    value = expr.evalf(NUMERIC_DIGITS)
    return bool(not value.is_number or value.has(*_NOT_FINITE) or value.has(-sympy.oo))


def vanishes(diff: Any) -> bool:
    """True when ``diff`` (a constant) is zero: exactly, or by evalf finding no
    significant digit in it at `NUMERIC_DIGITS` (a cancellation, not a small number)."""
    if diff == 0:
        return True
    value = diff.evalf(NUMERIC_DIGITS)
    if value == 0:
        return True
    if not isinstance(value, sympy.Float):
        real, imag = value.as_real_imag()
        return all(vanishes_value(part) for part in (real, imag))
    return vanishes_value(value)


def vanishes_value(value: Any) -> bool:
    """An evaluated number with no significant bit left (evalf's ``0.e-N``) is zero."""
    if value == 0:
        return True
    return isinstance(value, sympy.Float) and value._prec < _SIGNIFICANT_BITS


_SIGNIFICANT_BITS = 20


def _small(*exprs: Any) -> bool:
    return all(sympy.count_ops(e) <= MAX_OPS for e in exprs)


def _constant_equal(
    g: Any, p: Any, policy: Policy, g_num: Number | None, p_num: Number | None
) -> Rule:
    gv = g.evalf(NUMERIC_DIGITS)
    pv = p.evalf(NUMERIC_DIGITS)
    if not (gv.is_number and pv.is_number):
        return None
    if vanishes(g - p):
        return "numeric_exact"
    if policy.tolerance == "exact" or not (gv.is_real and pv.is_real):
        return None
    diff = abs((g - p).evalf(NUMERIC_DIGITS))
    scale = max(abs(gv), abs(pv))
    if policy.tolerance == "relative":
        return "relative_tolerance" if diff <= policy.rel_tol * scale else None
    # digits policy against an irrational or non-terminating side
    if (
        policy.rounded_predictions
        and p_num is not None
        and p_num.decimals is not None
        and not g.is_Rational
        and (p_num.significant or 0) >= policy.min_sig_digits
        and _approximates(gv, p_num.value, p_num.decimals)
    ):
        return "rounded_prediction"
    if (
        g_num is not None
        and g_num.decimals is not None
        and not p.is_Rational
        and _approximates(pv, g_num.value, g_num.decimals)
    ):
        return "rounded_gold"
    return None


_POINTS = (
    (
        sympy.Rational(7, 10),
        sympy.Rational(-13, 10),
        sympy.Rational(23, 10),
        sympy.Rational(-31, 17),
    ),
    (sympy.Rational(-6, 11), sympy.Rational(19, 7), sympy.Rational(5, 13), sympy.Rational(41, 9)),
)


def _zero_at(g: Any, p: Any, point: dict[Any, Any]) -> bool | None:
    """Whether g - p vanishes at ``point``; None when undefined there."""
    gp, pp = g.xreplace(point), p.xreplace(point)
    if not_finite(gp) or not_finite(pp):
        return None
    diff = gp - pp
    if diff.is_Rational:
        return bool(diff == 0)
    value = diff.evalf(NUMERIC_DIGITS)
    if not value.is_number:
        return None
    return vanishes(diff)


def _identity(g: Any, p: Any, symbols: list[Any]) -> Rule:
    """Random-point test of g == p as functions, then exact confirmation when cheap."""
    rng = random.Random(len(symbols))
    valid = 0
    for trial in range(5):
        point = {
            s: sympy.Rational(rng.randint(-97, 97), rng.randint(7, 41)) + _POINTS[trial % 2][i % 4]
            for i, s in enumerate(symbols)
        }
        verdict = _zero_at(g, p, point)
        if verdict is False:
            return None
        if verdict:
            valid += 1
    if valid >= 3:
        return "identity"
    if _small(g, p) and sympy.simplify(g - p) == 0:
        return "simplified"
    return None


# --- equations ------------------------------------------------------------------------------


_SYMBOL = r"(?:[A-Za-z](?:_\{?\w+\}?)?'*|\\[a-zA-Z]+)"
_LABEL = re.compile(
    rf"\s*(?:{_SYMBOL}"  # x, a_n, f', \theta
    r"|[A-Za-z]{2,4}"  # AB, xy: a segment or a named quantity
    rf"|[A-Za-z]\w*\s*\(\s*[^()=<>]*\)"  # f(x), P(A), f(2)
    rf"|\(\s*{_SYMBOL}(?:\s*,\s*{_SYMBOL})+\s*\)"  # (p, q)
    r"|\|\s*[A-Za-z ]+\s*\||\\[lv]?vert\s*[A-Za-z ]+\s*\\[rv]?vert"  # |AB|
    r"|(?:m\s*)?\\(?:angle|overline|overrightarrow|vec|widehat)\s*\{?\s*[A-Za-z ]+\}?"
    r")\s*"
)


def _is_symbol_name(text: str) -> bool:
    """Whether ``text``, the left side of ``lhs = value``, only names what the value is
    (a label: ``x``, ``f(x)``, ``(p,q)``, ``|AB|``, ``\\angle ABC``), so the value alone
    answers too. ``2x`` or ``x+y`` are not labels: such a side makes a real equation."""
    return _LABEL.fullmatch(text) is not None


def _equation_equal(gold: Equation, pred: Node, policy: Policy) -> Rule:
    if not isinstance(pred, Equation):
        if _is_symbol_name(gold.lhs):
            rule = node_equal(gold.rhs, pred, policy)
            return f"gold_assignment:{rule}" if rule else None
        return None
    g_assign = _is_symbol_name(gold.lhs)
    p_assign = _is_symbol_name(pred.lhs)
    if (
        g_assign
        and p_assign
        and not _mentions(gold.rhs, gold.lhs)
        and not _mentions(pred.rhs, pred.lhs)
    ):
        if _squash(gold.lhs) != _squash(pred.lhs):
            return None
        rule = node_equal(gold.rhs, pred.rhs, policy)
        return f"assignment:{rule}" if rule else None
    return _general_equation(gold, pred)


def _squash(text: str) -> str:
    return "".join(text.split()).replace("{", "").replace("}", "")


def _mentions(node: Node, name: str) -> bool:
    if isinstance(node, Scalar) and node.expr is not None:
        return any(s.name == _squash(name) for s in node.expr.free_symbols)
    return False


def _general_equation(gold: Equation, pred: Equation) -> Rule:
    if gold.lhs_expr is None or pred.lhs_expr is None:
        return None
    if not isinstance(gold.rhs, Scalar) or not isinstance(pred.rhs, Scalar):
        return None
    policy = Policy()
    g = _prepare(gold.lhs_expr - gold.rhs.sympy(), policy)
    p = _prepare(pred.lhs_expr - pred.rhs.sympy(), policy)
    if g.free_symbols != p.free_symbols or p == 0:
        return None
    symbols = sorted(g.free_symbols, key=lambda s: s.name)
    if not symbols:
        return None
    ratio = sympy.cancel(g / p) if _small(g, p) else None
    if ratio is not None and not ratio.free_symbols and ratio != 0:
        return "equivalent_equation"
    # numeric: the ratio takes the same nonzero value at random points
    values = []
    rng = random.Random(3)
    for _ in range(4):
        point = {s: sympy.Rational(rng.randint(-97, 97), rng.randint(7, 41)) for s in symbols}
        pv = p.xreplace(point)
        if pv == 0:
            continue
        values.append(g.xreplace(point) / pv)
    if (
        len(values) >= 3
        and not vanishes(values[0])
        and not any(not_finite(v) for v in values)
        and all(vanishes(v - values[0]) for v in values)
    ):
        return "equivalent_equation"
    return None


# --- sequences, sets, intervals -----------------------------------------------------------


def _seq_equal(gold: Seq, pred: Node, policy: Policy) -> Rule:
    if (
        isinstance(pred, Scalar | Equation)
        and len(gold.items) == 1
        and gold.kind in ("set", "bare")
    ):
        rule = node_equal(gold.items[0], pred, policy)
        return f"singleton:{rule}" if rule else None
    named = _assigned_values(gold)
    if named is not None and _is_pair(pred, len(named)):
        return _pair_equal(named, _pair_items(pred), policy)
    if not isinstance(pred, Seq) or len(pred.items) != len(gold.items):
        return None
    if gold.kind in ("set", "bare"):
        if pred.kind not in ("set", "bare"):
            return None
        return "unordered" if _match_unordered(gold.items, pred.items, policy) else None
    if pred.kind not in (gold.kind, "bare"):
        return None
    ok = all(node_equal(g, p, policy) for g, p in zip(gold.items, pred.items, strict=True))
    return "ordered" if ok else None


def _match_unordered(gold: tuple[Node, ...], pred: tuple[Node, ...], policy: Policy) -> bool:
    remaining = list(pred)
    for g in gold:
        for index, p in enumerate(remaining):
            if node_equal(g, p, policy):
                del remaining[index]
                break
        else:
            return False
    return not remaining


def _interval_equal(gold: Interval, pred: Node, policy: Policy) -> Rule:
    if isinstance(pred, Interval):
        if (gold.left_open, gold.right_open) != (pred.left_open, pred.right_open):
            return None
        if node_equal(gold.lo, pred.lo, policy) and node_equal(gold.hi, pred.hi, policy):
            return "interval"
        return None
    if isinstance(pred, Seq) and pred.kind == "tuple" and gold.left_open and gold.right_open:
        return None
    named = _assigned_values(pred)
    if named is not None and len(named) == 2 and gold.left_open and gold.right_open:
        return _pair_equal((gold.lo, gold.hi), named, policy)
    if isinstance(pred, SympyObject) and isinstance(pred.value, sympy.MatrixBase):
        return _vector_equal(pred.value, (gold.lo, gold.hi), policy) if gold.left_open else None
    return _set_equal(gold, pred, policy)


def _assigned_values(node: Node) -> tuple[Node, ...] | None:
    """The values of ``x=5, y=6`` (a list of two or more assignments to distinct names,
    in the order written): a point given by its coordinates; else None."""
    if not isinstance(node, Seq) or node.kind != "bare" or len(node.items) < 2:
        return None
    items = node.items
    if not all(isinstance(i, Equation) and _is_symbol_name(i.lhs) for i in items):
        return None
    names = {_squash(i.lhs) for i in items if isinstance(i, Equation)}
    if len(names) != len(items):
        return None
    values = tuple(i.rhs for i in items if isinstance(i, Equation))
    if any(_mentions(v, name) for v in values for name in names):
        return None
    return values


def _is_pair(node: Node, size: int) -> bool:
    """Whether ``node`` is a tuple of ``size`` items (an open interval is a pair too)."""
    if isinstance(node, Interval):
        return size == 2 and node.left_open and node.right_open
    return isinstance(node, Seq) and node.kind == "tuple" and len(node.items) == size


def _pair_items(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Interval):
        return (node.lo, node.hi)
    assert isinstance(node, Seq)
    return node.items


def _pair_equal(gold: tuple[Node, ...], pred: tuple[Node, ...], policy: Policy) -> Rule:
    """A tuple against a point's coordinates, in order: ``(5,6)`` is ``x=5, y=6``."""
    ok = all(node_equal(g, p, policy) for g, p in zip(gold, pred, strict=True))
    return "coordinates" if ok else None


def to_sympy_set(node: Node) -> Any:
    """A sympy set for an interval, union, set or relation node; None when there is none."""
    if isinstance(node, Interval):
        lo, hi = _endpoint(node.lo), _endpoint(node.hi)
        if lo is None or hi is None:
            return None
        interval = sympy.Interval(lo, hi, node.left_open, node.right_open)
        # (0, 0) or (3, 1) is an ordered pair, never the empty set
        return None if interval is sympy.EmptySet else interval
    if isinstance(node, Union):
        parts = [to_sympy_set(p) for p in node.parts]
        return None if any(p is None for p in parts) else sympy.Union(*parts)
    if isinstance(node, Seq) and node.kind == "set":
        values = [_endpoint(i) for i in node.items]
        return None if any(v is None for v in values) else sympy.FiniteSet(*values)
    if isinstance(node, SympyObject):
        value = node.value
        if isinstance(value, sympy.Set):
            return value
        if isinstance(value, sympy.core.relational.Relational | sympy.And | sympy.Or):
            symbols = value.free_symbols
            if len(symbols) != 1:
                return None
            return _prepare_relation(value).as_set()
    if isinstance(node, Equation) and isinstance(node.rhs, Interval | Union):
        return to_sympy_set(node.rhs)
    return None


def _prepare_relation(value: Any) -> Any:
    symbols = value.free_symbols
    real = {s: sympy.Symbol(s.name, real=True) for s in symbols}
    return value.xreplace(real)


def _endpoint(node: Node) -> Any:
    if isinstance(node, Scalar):
        value = _prepare(node.sympy(), Policy(complex_i=False))
        if isinstance(value, sympy.Expr) and not value.free_symbols:
            return value
    return None


def _set_equal(gold: Node, pred: Node, policy: Policy) -> Rule:
    g = to_sympy_set(gold)
    p = to_sympy_set(pred)
    if g is None or p is None:
        if (
            isinstance(gold, Union)
            and isinstance(pred, Union)
            and len(gold.parts) == len(pred.parts)
        ):
            return "union_parts" if _match_unordered(gold.parts, pred.parts, policy) else None
        return None
    if g == p:
        return "same_set"
    if _is_relation(gold) != _is_relation(pred) or isinstance(gold, Union | Interval):
        # one side is an inequality: compare the solution sets exactly
        pass
    if sympy.Complement(g, p) == sympy.EmptySet and sympy.Complement(p, g) == sympy.EmptySet:
        return "same_set"
    return None


def _is_relation(node: Node) -> bool:
    return isinstance(node, SympyObject) and isinstance(
        node.value, sympy.core.relational.Relational | sympy.And | sympy.Or
    )


# --- relations, matrices, other sympy objects -----------------------------------------------


def _object_equal(gold: Any, pred: Node, policy: Policy) -> Rule:
    if isinstance(gold, sympy.MatrixBase):
        return _matrix_equal(gold, pred, policy)
    if isinstance(gold, sympy.core.relational.Relational | sympy.And | sympy.Or):
        return _relation_equal(gold, pred)
    if isinstance(gold, sympy.Set):
        return _set_equal(SympyObject(gold), pred, policy)
    return None


def _relation_equal(gold: Any, pred: Node) -> Rule:
    if isinstance(pred, SympyObject) and _is_relation(pred):
        if _names(gold.free_symbols) != _names(pred.value.free_symbols):
            return None
        if gold == pred.value:
            return "same_relation"
        if len(gold.free_symbols) == 1:
            g, p = to_sympy_set(SympyObject(gold)), to_sympy_set(pred)
            return "same_solution_set" if g is not None and g == p else None
        return _multivariate_relation(gold, pred.value)
    if isinstance(pred, Interval | Union):
        g, p = to_sympy_set(SympyObject(gold)), to_sympy_set(pred)
        return "inequality_as_interval" if g is not None and p is not None and g == p else None
    return None


def _names(symbols: Any) -> set[str]:
    return {s.name for s in symbols}


def _multivariate_relation(g: Any, p: Any) -> Rule:
    def canon(rel: Any) -> tuple[Any, bool] | None:
        if isinstance(rel, sympy.StrictGreaterThan | sympy.GreaterThan):
            return rel.lhs - rel.rhs, isinstance(rel, sympy.StrictGreaterThan)
        if isinstance(rel, sympy.StrictLessThan | sympy.LessThan):
            return rel.rhs - rel.lhs, isinstance(rel, sympy.StrictLessThan)
        return None

    cg, cp = canon(g), canon(p)
    if cg is None or cp is None or cg[1] != cp[1]:
        return None
    ratio = sympy.cancel(cg[0] / cp[0]) if _small(cg[0], cp[0]) else None
    if ratio is not None and not ratio.free_symbols and ratio.is_positive:
        return "equivalent_inequality"
    return None


def _matrix_equal(gold: Any, pred: Node, policy: Policy) -> Rule:
    if isinstance(pred, SympyObject) and isinstance(pred.value, sympy.MatrixBase):
        if gold.shape != pred.value.shape:
            return None
        ok = all(
            expr_equal(_prepare(a, policy), _prepare(b, policy), policy)
            for a, b in zip(gold, pred.value, strict=True)
        )
        return "matrix" if ok else None
    if isinstance(pred, Seq) and pred.kind in ("tuple", "list", "bare"):
        return _vector_equal(gold, pred.items, policy)
    if isinstance(pred, Interval) and pred.left_open == pred.right_open:
        return _vector_equal(gold, (pred.lo, pred.hi), policy)
    return None


def _vector_equal(matrix: Any, items: tuple[Node, ...], policy: Policy) -> Rule:
    if 1 not in matrix.shape or len(matrix) != len(items):
        return None
    for entry, item in zip(matrix, items, strict=True):
        if not isinstance(item, Scalar):
            return None
        if not expr_equal(_prepare(entry, policy), _prepare(item.sympy(), policy), policy):
            return None
    return "vector_as_tuple"


Comparator = Callable[[Node, Node, Policy], Rule]
