"""A small, safe arithmetic formula language for combining component rewards.

Grammar (``^`` is power; it is right-associative and binds tighter than unary minus, as in
mathematics and Python's ``**``: ``-2^2 == -4``, ``2^-1 == 0.5``, ``2^3^2 == 2^9``)::

    expr   := term (("+" | "-") term)*
    term   := unary (("*" | "/") unary)*
    unary  := ("+" | "-")* power
    power  := atom ("^" unary)?
    atom   := NUMBER | NAME | FUNC "(" expr ("," expr)* ")" | "(" expr ")"

``NUMBER`` is an integer, a decimal or scientific notation (``3``, ``.5``, ``2.5e-3``);
``NAME`` is an ASCII identifier; ``FUNC`` is one of ``min``, ``max`` (one or more
arguments), ``clip(x, lo, hi)``, and the one-argument ``abs``, ``floor``, ``ceil``,
``exp``, ``sqrt`` and ``log`` (natural; the functions OpenAI's ``calculate_output``
documents).

Formulas come from untrusted clients. Nothing here calls ``eval`` or compiles Python:
text is tokenised and parsed by hand into immutable `Expr` trees, length and nesting
depth are capped so hostile input cannot exhaust the stack, and evaluation works on
floats only (so ``9^9^9`` overflows into a `FormulaError` instead of building a huge int).
"""

from __future__ import annotations

import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

MAX_LENGTH = 1000
"""Longest formula accepted, in characters."""
MAX_DEPTH = 50
"""Deepest nesting accepted: parentheses, function arguments and exponents."""
NAME_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*"
"""What a name in a formula looks like (ASCII identifiers)."""

ChainOp = Literal["+", "-", "*", "/"]


class FormulaError(ValueError):
    """A formula that does not parse, or cannot be evaluated with the given values."""


class Expr(ABC):
    """A parsed formula: an immutable tree, safe to share between threads and cache."""

    @abstractmethod
    def names(self) -> frozenset[str]:
        """Every name the formula refers to."""


@dataclass(frozen=True)
class Number(Expr):
    value: float

    def names(self) -> frozenset[str]:
        return frozenset()


@dataclass(frozen=True)
class Name(Expr):
    name: str

    def names(self) -> frozenset[str]:
        return frozenset((self.name,))


@dataclass(frozen=True)
class Negate(Expr):
    operand: Expr

    def names(self) -> frozenset[str]:
        return self.operand.names()


@dataclass(frozen=True)
class Chain(Expr):
    """``first op1 x1 op2 x2 ...`` evaluated left to right; all ops share one precedence.

    A flat run rather than nested binary nodes, so ``a + b + ... + z`` stays one level
    deep and long sums never count against `MAX_DEPTH`.
    """

    first: Expr
    rest: tuple[tuple[ChainOp, Expr], ...]

    def names(self) -> frozenset[str]:
        return self.first.names().union(*(operand.names() for _, operand in self.rest))


@dataclass(frozen=True)
class Power(Expr):
    base: Expr
    exponent: Expr

    def names(self) -> frozenset[str]:
        return self.base.names() | self.exponent.names()


@dataclass(frozen=True)
class Call(Expr):
    function: str
    args: tuple[Expr, ...]

    def names(self) -> frozenset[str]:
        return frozenset[str]().union(*(arg.names() for arg in self.args))


# name -> (fewest arguments, most arguments or None for "any number")
FUNCTIONS: dict[str, tuple[int, int | None]] = {
    "min": (1, None),
    "max": (1, None),
    "abs": (1, 1),
    "clip": (3, 3),
    "floor": (1, 1),
    "ceil": (1, 1),
    "exp": (1, 1),
    "sqrt": (1, 1),
    "log": (1, 1),
}
_UNARY: dict[str, Callable[[float], float]] = {
    "abs": abs,
    "floor": math.floor,
    "ceil": math.ceil,
    "exp": math.exp,
    "sqrt": math.sqrt,
    "log": math.log,
}

_TOKEN = re.compile(
    rf"(?P<space>\s+)"
    rf"|(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    rf"|(?P<name>{NAME_PATTERN})"
    rf"|(?P<op>[-+*/^(),])"
)


@dataclass(frozen=True)
class _Token:
    kind: Literal["num", "name", "op", "end"]
    text: str
    pos: int


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    pos = 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise FormulaError(f"unexpected character {text[pos]!r} at offset {pos}")
        kind = match.lastgroup
        if kind != "space":
            tokens.append(_Token(kind, match.group(), pos))  # type: ignore[arg-type]
        pos = match.end()
    tokens.append(_Token("end", "", len(text)))
    return tokens


@lru_cache(maxsize=512)
def parse(text: str) -> Expr:
    """Parse ``text`` into an `Expr`; raise `FormulaError` saying what is wrong and where.

    Offsets in messages are 0-based character positions. Results are cached (trees are
    immutable), so the items of a batch that share a formula parse it once.
    """
    if len(text) > MAX_LENGTH:
        raise FormulaError(f"formula is {len(text)} characters long; the limit is {MAX_LENGTH}")
    return _Parser(_tokenize(text)).parse()


class _Parser:
    """Recursive descent over the token list; ``depth`` bounds the recursion."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.index = 0
        self.depth = 0

    @property
    def token(self) -> _Token:
        return self.tokens[self.index]

    def advance(self) -> _Token:
        token = self.token
        self.index += 1
        return token

    def at(self, *texts: str) -> bool:
        return self.token.kind == "op" and self.token.text in texts

    def expect(self, text: str) -> None:
        if not self.at(text):
            raise self.unexpected(f"expected {text!r}")
        self.advance()

    def unexpected(self, hint: str) -> FormulaError:
        token = self.token
        found = "end of formula" if token.kind == "end" else repr(token.text)
        return FormulaError(f"{hint}, found {found} at offset {token.pos}")

    def nested(self, parse: Callable[[], Expr]) -> Expr:
        """Run ``parse`` one nesting level deeper, refusing to go past `MAX_DEPTH`."""
        if self.depth >= MAX_DEPTH:
            raise FormulaError(
                f"formula nests more than {MAX_DEPTH} levels deep at offset {self.token.pos}"
            )
        self.depth += 1
        try:
            return parse()
        finally:
            self.depth -= 1

    def parse(self) -> Expr:
        expr = self.expression()
        if self.token.kind != "end":
            raise self.unexpected("expected an operator or the end of the formula")
        return expr

    def expression(self) -> Expr:
        return self.chain(("+", "-"), self.term)

    def term(self) -> Expr:
        return self.chain(("*", "/"), self.unary)

    def chain(self, ops: tuple[ChainOp, ...], operand: Callable[[], Expr]) -> Expr:
        first = operand()
        rest: list[tuple[ChainOp, Expr]] = []
        while self.at(*ops):
            op: ChainOp = self.advance().text  # type: ignore[assignment]
            rest.append((op, operand()))
        return Chain(first, tuple(rest)) if rest else first

    def unary(self) -> Expr:
        # Signs fold in a loop, not by recursion, so "----x" costs no stack.
        negative = False
        while self.at("+", "-"):
            negative ^= self.advance().text == "-"
        operand = self.power()
        return Negate(operand) if negative else operand

    def power(self) -> Expr:
        base = self.atom()
        if not self.at("^"):
            return base
        self.advance()
        return Power(base, self.nested(self.unary))

    def atom(self) -> Expr:
        token = self.token
        if token.kind == "num":
            self.advance()
            return Number(_number(token))
        if token.kind == "name":
            self.advance()
            return self.call(token) if self.at("(") else Name(token.text)
        if self.at("("):
            self.advance()
            inner = self.nested(self.expression)
            self.expect(")")
            return inner
        raise self.unexpected("expected a number, a name or '('")

    def call(self, name: _Token) -> Expr:
        if name.text not in FUNCTIONS:
            known = ", ".join(sorted(FUNCTIONS))
            raise FormulaError(
                f"unknown function {name.text!r} at offset {name.pos}; known: {known}"
            )
        self.expect("(")
        args = [self.nested(self.expression)]
        while self.at(","):
            self.advance()
            args.append(self.nested(self.expression))
        self.expect(")")
        fewest, most = FUNCTIONS[name.text]
        if len(args) < fewest or (most is not None and len(args) > most):
            wanted = f"{fewest}" if fewest == most else f"at least {fewest}"
            raise FormulaError(
                f"{name.text}() at offset {name.pos} takes {wanted} argument(s), got {len(args)}"
            )
        return Call(name.text, tuple(args))


def _number(token: _Token) -> float:
    value = float(token.text)
    if not math.isfinite(value):
        raise FormulaError(f"number {token.text!r} at offset {token.pos} is out of range")
    return value


def evaluate(expr: Expr, values: Mapping[str, float]) -> float:
    """The value of ``expr`` with each name bound by ``values``; always a finite float.

    Raises `FormulaError` for an unknown name, division by zero, a power or a function
    outside the real numbers (``(-8)^(1/3)``, ``0^-1``, ``sqrt(-1)``, ``log(0)``),
    ``clip`` with ``lo > hi``, or any intermediate
    result that is not finite (overflow, or a non-finite value passed in).
    """
    try:
        return _eval(expr, values)
    except ZeroDivisionError:
        raise FormulaError("division by zero") from None
    except OverflowError:
        raise FormulaError("numeric overflow") from None


def _eval(expr: Expr, values: Mapping[str, float]) -> float:
    match expr:
        case Number(value):
            return value
        case Name(name):
            if name not in values:
                raise FormulaError(f"unknown name {name!r}")
            return _finite(float(values[name]), f"value of {name!r}")
        case Negate(operand):
            return -_eval(operand, values)
        case Chain(first, rest):
            result = _eval(first, values)
            for op, operand in rest:
                result = _finite(_apply(op, result, _eval(operand, values)), f"'{op}'")
            return result
        case Power(base, exponent):
            return _power(_eval(base, values), _eval(exponent, values))
        case Call(function, args):
            return _call(function, [_eval(arg, values) for arg in args])
    raise TypeError(f"not a formula node: {expr!r}")


def _apply(op: ChainOp, left: float, right: float) -> float:
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    return left / right


def _power(base: float, exponent: float) -> float:
    try:
        # math.pow, not **: it raises instead of returning a complex number.
        return _finite(math.pow(base, exponent), "'^'")
    except ValueError:
        raise FormulaError(f"{base!r} ^ {exponent!r} is not a real number") from None


def _call(function: str, args: list[float]) -> float:
    if function == "min":
        return min(args)
    if function == "max":
        return max(args)
    if function in _UNARY:
        try:
            return _finite(float(_UNARY[function](args[0])), f"{function}()")
        except ValueError:  # sqrt(-1), log(0): math raises instead of going complex
            raise FormulaError(f"{function}({args[0]!r}) is not a real number") from None
    value, lo, hi = args
    if lo > hi:
        raise FormulaError(f"clip() lower bound {lo!r} is above upper bound {hi!r}")
    return min(max(value, lo), hi)


def _finite(value: float, what: str) -> float:
    if not math.isfinite(value):
        raise FormulaError(f"{what} gave a non-finite result ({value!r})")
    return value
