"""A small parser from plain math text (``-2*x**3*cos(x) + 6*x^2 + C``) to sympy, built
node by node: no ``eval``, no ``parse_expr``, so an answer is never run as code.

Grammar: numbers (integers, decimals), names (the problem's variable, ``C``, ``pi``,
``E``), the functions in `FUNCTIONS` applied with parentheses, ``+ - * /``, ``**`` or
``^`` (right-associative), and parentheses. Sizes are bounded (`MAX_LENGTH` characters,
`MAX_DEPTH` nesting, integer exponents up to `MAX_EXPONENT`) so a hostile answer cannot
make sympy build a giant number. Anything else raises `SymbolicError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import sympy

MAX_LENGTH = 4000
MAX_DEPTH = 60
MAX_EXPONENT = 100
FUNCTIONS: Mapping[str, sympy.Function] = {
    name: getattr(sympy, name)
    for name in (
        "sin", "cos", "tan", "cot", "sec", "csc", "asin", "acos", "atan",
        "sinh", "cosh", "tanh", "exp", "log", "sqrt", "Abs",
    )
}  # fmt: skip
CONSTANTS = {"pi": sympy.pi, "E": sympy.E}
_TOKEN = re.compile(r"\s*(?:(\d+\.\d*|\.\d+|\d+)|([A-Za-z_][A-Za-z_0-9]*)|(\*\*|[-+*/^()]))")


class SymbolicError(ValueError):
    """The text is not an expression of the grammar (or is too big)."""


def parse_math(text: str, symbols: Mapping[str, sympy.Symbol]) -> sympy.Expr:
    """The sympy expression of ``text``; names other than ``symbols``, constants and
    functions are refused."""
    if len(text) > MAX_LENGTH:
        raise SymbolicError(f"longer than {MAX_LENGTH} characters")
    parser = _Parser(_tokens(text), symbols)
    expr = parser.sum(0)
    if parser.position != len(parser.tokens):
        raise SymbolicError(f"unexpected {parser.tokens[parser.position][1]!r}")
    # sympy folds (a**100)**100 and a**100 * a**100 into one power: check what it built,
    # so that no degree above the bound reaches diff and simplify
    for power in expr.atoms(sympy.Pow):
        if power.exp.is_number and (not power.exp.is_finite or abs(power.exp) > MAX_EXPONENT):
            raise SymbolicError(f"an exponent above {MAX_EXPONENT}")
    return expr


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise SymbolicError(f"unexpected character {text[position]!r}")
        number, name, op = match.groups()
        tokens.append(("num", number) if number else ("name", name) if name else ("op", op))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], symbols: Mapping[str, sympy.Symbol]):
        self.tokens, self.symbols, self.position = tokens, symbols, 0

    def peek(self) -> str | None:
        return self.tokens[self.position][1] if self.position < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        if self.position >= len(self.tokens):
            raise SymbolicError("unexpected end")
        self.position += 1
        return self.tokens[self.position - 1]

    def expect(self, text: str) -> None:
        if self.take()[1] != text:
            raise SymbolicError(f"expected {text!r}")

    def sum(self, depth: int) -> sympy.Expr:
        if depth > MAX_DEPTH:
            raise SymbolicError("nested too deeply")
        terms = [self.product(depth)]
        while self.peek() in ("+", "-"):
            sign = self.take()[1]
            term = self.product(depth)
            terms.append(term if sign == "+" else -term)
        return sympy.Add(*terms)

    def product(self, depth: int) -> sympy.Expr:
        result = self.unary(depth)
        while self.peek() in ("*", "/"):
            op = self.take()[1]
            factor = self.unary(depth)
            result = result * factor if op == "*" else result / factor
        return result

    def unary(self, depth: int) -> sympy.Expr:
        if self.peek() in ("+", "-"):
            sign = self.take()[1]
            value = self.unary(depth + 1)
            return value if sign == "+" else -value
        return self.power(depth)

    def power(self, depth: int) -> sympy.Expr:
        base = self.atom(depth)
        if self.peek() not in ("**", "^"):
            return base
        self.take()
        exponent = self.unary(depth + 1)
        if exponent.is_number and (not exponent.is_finite or abs(exponent) > MAX_EXPONENT):
            raise SymbolicError(f"an exponent above {MAX_EXPONENT}")
        if base.is_Integer and exponent.is_Integer and abs(int(base)).bit_length() > 64:
            raise SymbolicError("a power of a number over 64 bits")
        return sympy.Pow(base, exponent)

    def atom(self, depth: int) -> sympy.Expr:
        kind, text = self.take()
        if kind == "num":
            return sympy.Rational(text) if "." in text else sympy.Integer(text)
        if kind == "name":
            return self.named(text, depth)
        if text == "(":
            inner = self.sum(depth + 1)
            self.expect(")")
            return inner
        raise SymbolicError(f"unexpected {text!r}")

    def named(self, name: str, depth: int) -> sympy.Expr:
        if name in FUNCTIONS and self.peek() == "(":
            self.take()
            argument = self.sum(depth + 1)
            self.expect(")")
            return FUNCTIONS[name](argument)
        if name in self.symbols:
            return self.symbols[name]
        if name in CONSTANTS:
            return CONSTANTS[name]
        raise SymbolicError(f"unknown name {name!r}")
