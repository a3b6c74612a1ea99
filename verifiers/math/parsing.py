"""Turn a normalised answer into a comparable node: numbers by the fast path, the rest by
latex2sympy2_extended (cached), with the top-level structure (lists, sets, tuples,
intervals, unions, equations) split here so that each element can take the fast path too.

Nodes:

- `Scalar`: an exact `Number` from the fast path, or a sympy expression;
- `Seq`: ``\\{a, b\\}`` (set), ``(a, b, c)`` (tuple), ``[a, b, c]`` (list), ``a, b`` (bare
  list);
- `Interval`: a two-element bracket pair ``(a,b)``, ``[a,b]``, ``[a,b)``, ``(a,b]``; ``(a,b)``
  is also how an ordered pair is written, and compares element-wise either way;
- `Union`: parts joined by ``\\cup``;
- `Equation`: ``lhs = rhs``;
- `SympyObject`: whatever else latex2sympy returns (relations, matrices, sets).

Guards against pathological input run before the parser: answer length, brace depth, and
numeric power towers or factorials of huge numbers, which are refused (`Unsafe`) instead
of being handed to sympy, which would try to evaluate them.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import sympy
from latex2sympy2_extended import latex2sympy
from latex2sympy2_extended.latex2sympy2 import ConversionConfig
from latex2sympy2_extended.math_normalization import NormalizationConfig

from referee.verifiers.math import expressions
from referee.verifiers.math.expressions import NotExpression
from referee.verifiers.math.fastpath import NotFast, Number, TooLarge, fast_number

MAX_ANSWER_CHARS = 1_000
MAX_DEPTH = 32
MAX_ELEMENTS = 64

_NORMALIZATION = NormalizationConfig(
    basic_latex=True, units=False, malformed_operators=True, nits=False, boxed="none"
)
_CONVERSION = ConversionConfig(
    interpret_as_mixed_fractions=True,
    interpret_simple_eq_as_assignment=False,
    interpret_contains_as_eq=True,
    lowercase_symbols=False,
)


class Unparsable(Exception):
    """The text is not an answer we can read."""


class Unsafe(Unparsable):
    """The text would take unreasonable time or memory to evaluate."""


class FalseChain(Unparsable):
    """A chain ``x = a = b`` whose constant sides differ: no single answer."""


@dataclass(frozen=True)
class Scalar:
    text: str
    number: Number | None = None
    expr: Any = None

    def sympy(self) -> Any:
        if self.expr is not None:
            return self.expr
        assert self.number is not None
        value = self.number.value
        return sympy.Rational(value.numerator, value.denominator)


@dataclass(frozen=True)
class Seq:
    kind: str  # "set", "tuple", "list", "bare"
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Interval:
    lo: Node
    hi: Node
    left_open: bool
    right_open: bool


@dataclass(frozen=True)
class Union:
    parts: tuple[Node, ...]


@dataclass(frozen=True)
class Equation:
    lhs: str
    rhs: Node
    lhs_expr: Any = None


@dataclass(frozen=True)
class SympyObject:
    value: Any


Node = Scalar | Seq | Interval | Union | Equation | SympyObject


def parse_answer(text: str, *, chains: bool = True) -> Node:
    """The node for a normalised answer; raises `Unparsable` (or `Unsafe`), and
    `FalseChain` for a chain ``x = 2+2 = 5`` unless ``chains`` is False (the text lost a
    percent sign or a unit in normalisation: ``\\frac12 = 50`` was ``\\frac12 = 50\\%``)."""
    if len(text) > MAX_ANSWER_CHARS:
        raise Unsafe(f"answer longer than {MAX_ANSWER_CHARS} characters")
    if not text.strip():
        raise Unparsable("empty answer")
    return _parse_cached(text.strip(), chains)


@lru_cache(maxsize=8192)
def _parse_cached(text: str, chains: bool) -> Node:
    return _node(text, 0, chains)


def _node(text: str, depth: int, chains: bool = True) -> Node:
    if depth > 4:
        raise Unparsable("nested too deeply")
    text = text.strip()
    if not text:
        raise Unparsable("empty element")
    try:
        return Scalar(text, number=fast_number(text))
    except NotFast:
        pass
    except TooLarge as exc:
        raise Unsafe(str(exc)) from None
    _check_depth(text)
    signs = _PLUS_MINUS.findall(text)
    if len(signs) == 1:
        # "\\frac{-b \\pm \\sqrt{d}}{2a}": the two values, wherever the sign stands
        plus, minus = ("+", "-") if signs[0] in ("\\pm", "±") else ("-", "+")
        both = (_PLUS_MINUS.sub(plus, text), _PLUS_MINUS.sub(minus, text))
        return Seq("bare", tuple(_node(t, depth + 1, chains) for t in both))
    parts = _split_top(text, r"\cup")
    if len(parts) > 1:
        return Union(tuple(_node(p, depth + 1, chains) for p in parts))
    if " or " in text and _is_relation(text):
        relations = [_latex(part) for part in text.split(" or ")]
        if all(isinstance(r, sympy.core.relational.Relational | sympy.And) for r in relations):
            return SympyObject(sympy.Or(*relations))
    alternatives = _JOINED.split(text)
    if len(alternatives) > 1:
        # "x = -3 or x = 2", "3 and 5": the values, as a bare (unordered) list
        if len(alternatives) > MAX_ELEMENTS:
            raise Unparsable("too many elements")
        return Seq("bare", tuple(_node(p, depth + 1, chains) for p in alternatives))
    if _JUXTAPOSED.search(text):
        raise Unparsable("two numbers side by side")
    if _APPROXIMATE.search(text):
        raise Unparsable("an approximation is no exact answer")
    structured = _bracketed(text, depth, chains)
    if structured is not None:
        return structured
    commas = _split_top(text, ",")
    if len(commas) > 1:
        if len(commas) > MAX_ELEMENTS:
            raise Unparsable("too many elements")
        return Seq("bare", tuple(_node(p, depth + 1, chains) for p in commas))
    sides = _split_top(text, "=")
    if len(sides) == 2 and sides[0].strip() and not _is_relation(text):
        lhs = sides[0].strip()
        return Equation(lhs, _node(sides[1], depth + 1, chains), _lhs_expr(lhs))
    if len(sides) > 2 and not _is_relation(text):
        # a chain "x = 2 + 3 = 5": the last side is the value, once the chain holds
        value = _node(sides[-1], depth + 1, chains)
        if chains:
            _check_chain(sides[:-1], value, depth)
        return value
    if r"\in" in text:
        found = re.match(r"^\s*([A-Za-z])\s*\\in(?![a-zA-Z])(.*)$", text, re.S)
        if found:
            return Equation(
                found.group(1), _node(found.group(2), depth + 1, chains), _lhs_expr(found.group(1))
            )
    return _from_sympy(text, _latex(text))


def _check_chain(sides: list[str], value: Node, depth: int) -> None:
    """Raise `FalseChain` when a side of ``x = 2 + 2 = 5`` is a number other than the
    value: the answer asserts something false, which ``2 + 2 = 5`` alone does too. Sides
    with variables (``V = \\frac43 \\pi r^3 = 36\\pi``) or that do not parse say nothing."""
    for side in sides:
        try:
            node = _node(side, depth + 1)
        except Unsafe:
            raise
        except Unparsable:
            continue
        if _differ(node, value):
            raise FalseChain(f"a chain of unequal values: {side.strip()} is not the answer")


def _differ(side: Node, value: Node) -> bool:
    """Whether two constants differ by more than the last written decimal place allows;
    an undefined or infinite side differs from any other value."""
    if not isinstance(side, Scalar) or not isinstance(value, Scalar):
        return False
    a, b = side.sympy(), value.sympy()
    if not (a.is_number and b.is_number):
        return False
    try:
        va, vb = sympy.N(a, 30), sympy.N(b, 30)
        if va == vb:
            return False
        if not (_finite(va) and _finite(vb)):
            return True
        return not _agree(va, vb, _places(side), _places(value))
    except (MemoryError, RecursionError):
        raise
    except Exception:  # noqa: BLE001 - sympy raises many types on odd constants
        return False


def _places(node: Scalar) -> int | None:
    return None if node.number is None else node.number.decimals


def _agree(a: Any, b: Any, a_places: int | None, b_places: int | None) -> bool:
    """Exact values agree to 12 digits; a decimal with fewer places (``0.33``, ``0.67``)
    agrees with a value it rounds or cuts to those places."""
    written = [(n, v) for n, v in ((a_places, a), (b_places, b)) if n is not None]
    if not written:
        return bool(abs(a - b) <= max(abs(b), 1) * sympy.Float("1e-12"))
    places, short = min(written, key=lambda w: w[0])  # the decimal with the fewest places
    other = b if short is a else a
    unit = sympy.Float(10) ** -places
    if abs(other - short) <= unit / 2:
        return True
    return bool((other >= 0) == (short >= 0) and abs(short) <= abs(other) < abs(short) + unit)


def _finite(value: Any) -> bool:
    return bool(value.is_number and not value.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo))


_PLUS_MINUS = re.compile(r"\\(?:pm|mp)(?![a-zA-Z])|±|∓")
"""``\\pm``, ``\\mp`` (not ``\\pmatrix``, ``\\pmod``), or their characters."""
_PAIRS = {"(": ")", "[": "]", "\\{": "\\}", "\\langle": "\\rangle"}
_JOINED = re.compile(r"\s+(?:or|and)\s+|\s*,?\s*\\(?:text|mbox)\s*\{\s*(?:or|and)\s*\}\s*")
# "11 7/6", "3 4": numbers separated only by a space are no single value (the LaTeX parser
# would multiply them, or read a mixed number); a proper mixed number was rewritten earlier.
_APPROXIMATE = re.compile(r"\\(?:approx|simeq|sim|thickapprox|fallingdotseq)(?![a-zA-Z])|≈")
_JUXTAPOSED = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s+\.?\d")


def _bracketed(text: str, depth: int, chains: bool) -> Node | None:
    """A bracketed list, set, tuple or interval spanning the whole text; else None."""
    opener = next((o for o in ("\\{", "\\langle", "(", "[") if text.startswith(o)), None)
    if opener is None:
        return None
    closer = next((c for c in ("\\}", "\\rangle", ")", "]") if text.endswith(c)), None)
    if closer is None:
        return None
    inner = text[len(opener) : len(text) - len(closer)]
    if not _balanced(inner):
        return None
    items = _split_top(inner, ",")
    if len(items) > MAX_ELEMENTS:
        raise Unparsable("too many elements")
    if opener == "\\{":
        if closer != "\\}":
            return None
        if not inner.strip():
            return Seq("set", ())
        return Seq("set", tuple(_node(i, depth + 1, chains) for i in items))
    if opener == "\\langle":
        return (
            Seq("tuple", tuple(_node(i, depth + 1, chains) for i in items))
            if closer == "\\rangle"
            else None
        )
    if closer not in (")", "]"):
        return None
    if len(items) == 2:
        return Interval(
            _node(items[0], depth + 1, chains),
            _node(items[1], depth + 1, chains),
            left_open=opener == "(",
            right_open=closer == ")",
        )
    if len(items) > 2 and _PAIRS[opener] == closer:
        return Seq(
            "tuple" if opener == "(" else "list", tuple(_node(i, depth + 1, chains) for i in items)
        )
    return None


_OPEN = re.compile(r"\\\{|\\langle|[({\[]")
_CLOSE = re.compile(r"\\\}|\\rangle|[)}\]]")


def _balanced(text: str) -> bool:
    depth = 0
    for token in re.finditer(r"\\\{|\\\}|\\langle|\\rangle|[(){}\[\]]", text):
        depth += 1 if _OPEN.fullmatch(token.group()) else -1
        if depth < 0:
            return False
    return depth == 0


def _split_top(text: str, sep: str) -> list[str]:
    """Split ``text`` at ``sep`` where no bracket is open."""
    if sep not in text:
        return [text]
    parts: list[str] = []
    depth = 0
    start = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            if text.startswith(sep, i) and depth == 0 and sep.startswith("\\"):
                end = i + len(sep)
                if end >= n or not text[end].isalpha():
                    parts.append(text[start:i])
                    start = i = end
                    continue
            if text.startswith("\\{", i) or text.startswith("\\langle", i):
                depth += 1
            elif text.startswith("\\}", i) or text.startswith("\\rangle", i):
                depth -= 1
            elif text.startswith("\\begin", i):
                depth += 1
            elif text.startswith("\\end", i):
                depth -= 1
            i += 2 if i + 1 < n and not text[i + 1].isalpha() else 1
            continue
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i) and not sep.startswith("\\"):
            if sep == "=" and (text[i - 1 : i] in "<>!" and i > 0):
                i += 1
                continue
            parts.append(text[start:i])
            start = i + len(sep)
        i += 1
    parts.append(text[start:])
    return parts


_RELATION = re.compile(r"<|>|\\le|\\ge|\\lt|\\gt|\\leq|\\geq|\\neq|\\ne(?![a-zA-Z])")


def _is_relation(text: str) -> bool:
    return _RELATION.search(text) is not None


def _check_depth(text: str) -> None:
    depth = peak = 0
    for ch in text:
        if ch in "({[":
            depth += 1
            peak = max(peak, depth)
        elif ch in ")}]":
            depth -= 1
    if peak > MAX_DEPTH:
        raise Unsafe(f"brackets nest deeper than {MAX_DEPTH}")


_POWER_GROUP = re.compile(r"\^\s*\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")
_BIG_INT = re.compile(r"\d{7,}")
_SUM_BOUND = re.compile(r"\\(?:sum|prod)\s*_\s*\{[^{}]*\}\s*\^\s*\{?\s*(\d+)")
_FACTORIAL_ARG = re.compile(r"(\d+)\s*!")


_COMMAND_NAME = re.compile(r"\\[a-zA-Z]+")


def _has_variable(text: str) -> bool:
    """Whether ``text`` names a variable (a letter other than e outside LaTeX commands)."""
    bare = _COMMAND_NAME.sub(" ", text)
    return any(c.isalpha() and c != "e" for c in bare)


def _guard(text: str) -> None:
    """Refuse numeric work that sympy would evaluate eagerly and never finish."""
    for group in _POWER_GROUP.finditer(text):
        exponent = group.group(1)
        if _BIG_INT.search(exponent):
            raise Unsafe("huge exponent")
        if ("^" in exponent or "!" in exponent) and not _has_variable(exponent):
            raise Unsafe("numeric power tower")
        digits = re.fullmatch(r"\s*-?\s*(\d+)\s*", exponent)
        if digits and int(digits.group(1)) > 10_000:
            raise Unsafe("huge exponent")
    for found in _FACTORIAL_ARG.finditer(text):
        if len(found.group(1)) > 4 or int(found.group(1)) > 5_000:
            raise Unsafe("factorial of a huge number")
    if "!" in text and re.search(r"[)}]\s*!", text) and "^" in text:
        raise Unsafe("factorial of a power")
    for bound in _SUM_BOUND.finditer(text):
        if int(bound.group(1)) > 1_000:
            raise Unsafe("sum or product over too many terms")
    if _largest_integer(_binomial_arguments(text)) > MAX_BINOMIAL:
        # sympy evaluates binomials through mpmath's gamma at the numbers' precision:
        # seconds from 10^4 on
        raise Unsafe("binomial of huge numbers")
    if _symbolic_determinant_cells(text) > MAX_SYMBOLIC_CELLS:
        # a symbolic determinant has n! terms, which the comparisons then expand
        raise Unsafe("symbolic determinant too large")


MAX_BINOMIAL = 2_000
MAX_SYMBOLIC_CELLS = 16
"""A binomial's numbers and a symbolic determinant's entries (4 x 4) sympy takes in well
under a second."""
_INTEGER = re.compile(r"\d+")
_BINOMIAL = re.compile(r"\\binom|\\choose")
_DETERMINANT = re.compile(r"\\det|\\begin\s*\{vmatrix\}")


def _largest_integer(text: str) -> int:
    """The largest integer written in ``text`` (0 without one; 10^12 for longer ones)."""
    return max((int(n) if len(n) < 12 else 10**12 for n in _INTEGER.findall(text)), default=0)


def _binomial_arguments(text: str) -> str:
    """The text of every binomial's arguments (``\\binom{n}{k}``: the two groups after
    it; ``{n \\choose k}``: the group around it), so that only their numbers count; the
    whole text for a binomial written without braces (the cautious reading)."""
    found = []
    for match in _BINOMIAL.finditer(text):
        if match.group() == "\\binom":
            first = _group_end(text, match.end())
            arguments = text[match.end() : _group_end(text, first)]
        else:
            start = _group_start(text, match.start())
            arguments = text[start : _group_end(text, start)]
        found.append(arguments.strip() or text)
    return " ".join(found)


def _group_end(text: str, start: int) -> int:
    """The index after the brace group opening at ``start`` (after blanks); ``start``
    itself when none opens there, the text's end when it is never closed."""
    at = len(text) - len(text[start:].lstrip())
    if at >= len(text) or text[at] != "{":
        return start
    depth = 0
    for index in range(at, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return index + 1
    return len(text)


def _group_start(text: str, inside: int) -> int:
    """The index of the unmatched ``{`` opening the group ``inside`` lies in (0: none)."""
    depth = 0
    for index in range(inside - 1, -1, -1):
        depth += {"}": 1, "{": -1}.get(text[index], 0)
        if depth < 0:
            return index
    return 0


def _symbolic_determinant_cells(text: str) -> int:
    """The entries of the largest matrix with a variable in it when the text takes a
    determinant (0 without one): numeric ones sympy reduces at once."""
    if not _DETERMINANT.search(text):
        return 0
    matrices = re.findall(r"\\begin\s*\{[pbvBV]?matrix\}(.*?)\\end", text, re.DOTALL)
    return max(
        (m.count("&") + m.count("\\\\") + 1 for m in matrices if _has_variable(m)), default=0
    )


@lru_cache(maxsize=8192)
def _latex(text: str) -> Any:
    _guard(text)
    try:
        return expressions.parse(text)
    except NotExpression:
        pass  # outside the small parser's subset: the full one decides
    try:
        return latex2sympy(text, normalization_config=_NORMALIZATION, conversion_config=_CONVERSION)
    except (MemoryError, RecursionError):
        raise
    except Exception as exc:  # noqa: BLE001 - the parser raises bare Exceptions
        raise Unparsable(f"not parsable: {str(exc).splitlines()[0][:120]}") from None


def _lhs_expr(lhs: str) -> Any:
    try:
        value = _latex(lhs)
    except Unparsable:
        return None
    return value if isinstance(value, sympy.Expr) else None


def _from_sympy(text: str, value: Any) -> Node:
    if isinstance(value, sympy.Expr) and not isinstance(value, sympy.Tuple):
        return Scalar(text, expr=value)
    if isinstance(value, sympy.Eq):
        lhs, rhs = value.lhs, value.rhs
        right: Node = Scalar(text, expr=rhs) if isinstance(rhs, sympy.Expr) else SympyObject(rhs)
        return Equation(str(lhs) if lhs.is_Symbol else text, right, lhs)
    return SympyObject(value)


def warm_up() -> None:
    """Build the ANTLR parser tables once (the first parse is ~50 ms slower)."""
    for sample in (r"\frac{\sqrt{2}}{2}+x^2", r"x \le 3", r"\begin{pmatrix}1\\2\end{pmatrix}"):
        with contextlib.suppress(Unparsable):
            _latex(sample)
