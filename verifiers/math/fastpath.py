"""Exact rational arithmetic on normalised answers, without any LaTeX parser.

Accepts integers, decimals, ``a/b``, ``\\frac{a}{b}`` (and ``\\frac12``), mixed numbers
(``2\\frac{1}{2}`` is 5/2), ``+ - * / ^ !``, ``\\cdot``, ``\\times``, ``\\div``, parentheses and
braces, ``\\sqrt`` of a perfect square. Anything else is `NotFast` (the caller falls back to
the LaTeX parser). Values are `fractions.Fraction`, so ``123456 != 123457`` and
``2^{-70} != 2^{-71}`` are decided exactly.

Pathological sizes are refused before they are computed: a power whose result would have
more than `MAX_BITS` bits, or a factorial above `MAX_FACTORIAL`, raises `TooLarge`
(``9^{9^{9^9}}`` is answered in microseconds, not after exhausting memory).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

MAX_BITS = 200_000
MAX_FACTORIAL = 5_000
MAX_TOKENS = 400


class NotFast(Exception):
    """The text is not plain arithmetic; use the general parser."""


class TooLarge(Exception):
    """Computing the value would take unreasonable time or memory."""


@dataclass(frozen=True)
class Number:
    """An exact value, and, when the text was one decimal literal, its fractional digits."""

    value: Fraction
    decimals: int | None = None
    significant: int | None = None


_TOKEN = re.compile(
    r"\s*(?:(\d+\.\d*|\.\d+|\d+)|(\\frac|\\sqrt|\\cdot|\\times|\\div)(?![a-zA-Z])|([-+*/^(){}!]))"
)
_DECIMAL = re.compile(r"^[-+]?(\d*)\.(\d+)$")
_INTEGER = re.compile(r"^[-+]?\d+$")
_SCIENTIFIC = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d{1,4}$")


def fast_number(text: str) -> Number:
    """Evaluate ``text``; raise `NotFast` or `TooLarge`."""
    text = text.strip()
    if _INTEGER.match(text):
        if len(text) > 5000:
            raise TooLarge("integer literal too long")
        return Number(Fraction(int(text)))
    decimal = _DECIMAL.match(text)
    if decimal:
        digits = (decimal.group(1) + decimal.group(2)).lstrip("0")
        return Number(Fraction(text), len(decimal.group(2)), max(1, len(digits)))
    if _SCIENTIFIC.match(text):
        return Number(Fraction(text))
    tokens = _tokenize(text)
    parser = _Parser(tokens)
    value = parser.expr()
    if parser.pos != len(tokens):
        raise NotFast("trailing tokens")
    return Number(value)


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    while pos < len(text):
        found = _TOKEN.match(text, pos)
        if not found:
            if text[pos:].strip() == "":
                break
            raise NotFast(f"unexpected {text[pos : pos + 8]!r}")
        tokens.append(found.group(found.lastindex or 0))
        pos = found.end()
        if len(tokens) > MAX_TOKENS:
            raise NotFast("too many tokens")
    return tokens


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise NotFast(f"expected {expected!r}")
        self.pos += 1
        return token

    def expr(self) -> Fraction:
        value = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            right = self.term()
            value = value + right if op == "+" else value - right
        return value

    def term(self) -> Fraction:
        value = self.unary()
        while self.peek() in ("*", "/", r"\cdot", r"\times", r"\div"):
            op = self.take()
            right = self.unary()
            if op in ("/", r"\div"):
                if right == 0:
                    raise NotFast("division by zero")
                value = value / right
            else:
                value = value * right
        return value

    def unary(self) -> Fraction:
        if self.peek() == "-":
            self.take()
            return -self.unary()
        if self.peek() == "+":
            self.take()
            return self.unary()
        return self.power()

    def power(self) -> Fraction:
        base = self.postfix()
        if self.peek() == "^":
            self.take()
            exponent = self.exponent()
            return _pow(base, exponent)
        return base

    def exponent(self) -> Fraction:
        if self.peek() == "{":
            self.take()
            value = self.expr()
            self.take("}")
            return value
        if self.peek() == "-":
            self.take()
            return -self.exponent()
        token = self.take()
        if token.isdigit():  # 2^10 in LaTeX is 2^1 * 0; only a single digit binds
            if len(token) > 1:
                raise NotFast("ambiguous multi-digit exponent")
            return Fraction(int(token))
        raise NotFast("unsupported exponent")

    def postfix(self) -> Fraction:
        value = self.atom()
        while self.peek() == "!":
            self.take()
            if value.denominator != 1 or value < 0:
                raise NotFast("factorial of a non-natural number")
            if value > MAX_FACTORIAL:
                raise TooLarge("factorial too large")
            value = Fraction(math.factorial(int(value)))
        return value

    def atom(self) -> Fraction:
        token = self.take()
        if token in ("(", "{"):
            value = self.expr()
            self.take(")" if token == "(" else "}")
            return value
        if token == r"\frac":
            numerator = self.group_or_digit()
            denominator = self.group_or_digit()
            if denominator == 0:
                raise NotFast("division by zero")
            return numerator / denominator
        if token == r"\sqrt":
            return _sqrt(self.group_or_digit())
        if token[0].isdigit() or token[0] == ".":
            value = Fraction(token)
            # Mixed number: 2\frac{1}{2} is 2 + 1/2 (digits touching a proper fraction).
            if token.isdigit() and self.peek() == r"\frac":
                self.take()
                numerator = self.group_or_digit()
                denominator = self.group_or_digit()
                part = numerator / denominator if denominator else Fraction(-1)
                if 0 < part < 1 and numerator.denominator == denominator.denominator == 1:
                    return value + part
                raise NotFast("digits times a fraction")
            return value
        raise NotFast(f"unexpected token {token!r}")

    def group_or_digit(self) -> Fraction:
        if self.peek() == "{":
            self.take()
            value = self.expr()
            self.take("}")
            return value
        token = self.take()
        if token.isdigit():
            if len(token) > 1:  # \frac12 is 1/2: split the digits
                self.tokens[self.pos - 1 : self.pos] = [token[0], token[1:]]
                return Fraction(int(token[0]))
            return Fraction(int(token))
        raise NotFast("unsupported \\frac argument")


def _pow(base: Fraction, exponent: Fraction) -> Fraction:
    if exponent.denominator != 1:
        root = _exact_root(base, exponent.denominator)
        return _pow(root, Fraction(exponent.numerator))
    power = int(exponent)
    if base == 0:
        if power < 0:
            raise NotFast("zero to a negative power")
        return Fraction(1 if power == 0 else 0)
    if abs(base) == 1:
        return Fraction(1) if base == 1 or power % 2 == 0 else Fraction(-1)
    bits = max(base.numerator.bit_length(), base.denominator.bit_length())
    if abs(power) > MAX_BITS or bits * abs(power) > MAX_BITS:
        raise TooLarge("power too large")
    return base**power


def _exact_root(value: Fraction, degree: int) -> Fraction:
    if degree > 64 or value < 0:
        raise NotFast("root")
    num = _int_root(value.numerator, degree)
    den = _int_root(value.denominator, degree)
    if num is None or den is None:
        raise NotFast("irrational root")
    return Fraction(num, den)


def _int_root(value: int, degree: int) -> int | None:
    if value.bit_length() > MAX_BITS:
        raise TooLarge("root of a huge number")
    guess: int | None = round(value ** (1 / degree)) if value.bit_length() < 1000 else None
    if guess is None:
        return math.isqrt(value) if degree == 2 and math.isqrt(value) ** 2 == value else None
    for candidate in (guess - 1, guess, guess + 1):
        if candidate >= 0 and candidate**degree == value:
            return int(candidate)
    return None


def _sqrt(value: Fraction) -> Fraction:
    return _exact_root(value, 2)
