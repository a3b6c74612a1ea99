"""A small hand-written parser for the LaTeX expressions answers are usually made of.

latex2sympy2_extended's ANTLR parser costs about 7 ms per expression, most of a symbolic
comparison's time. This parser reads the common subset in tens of microseconds and builds
the same sympy expressions latex2sympy would (unevaluated, ``evaluate=False``):

- numbers, single-letter variables (``x``, ``a_1``, ``a_{12}``), Greek letters, ``\\pi``,
  ``e`` (Euler's number), ``i`` (a symbol; the comparison decides whether it is the unit);
- ``+ - * / ^``, ``\\cdot``, ``\\times``, ``\\div``, implicit products (``2x``, ``2\\sqrt{3}``,
  ``(x+1)(x-1)``), unary signs, ``!``;
- ``(...)``, ``{...}``, ``\\left( ... \\right)``, ``|...|``;
- ``\\frac{a}{b}`` (and ``\\frac12``), ``\\sqrt{x}``, ``\\sqrt[n]{x}``, ``\\binom{n}{k}``,
  ``x^{...}``;
- ``\\sin \\cos \\tan \\cot \\sec \\csc``, their inverses and hyperbolic forms, ``\\ln``,
  ``\\exp``, with ``(...)``, ``{...}`` or a bare argument (``\\sin 2x``, ``\\sin \\frac{\\pi}{3}``:
  a product that stops at ``+``, ``-`` or the next function), and powers (``\\sin^2 x``).

Anything else (relations, commas, ``\\pm``, intervals, multi-letter names, a multi-digit
exponent written without braces, ``a/2x``) raises `NotExpression` and the caller falls back
to latex2sympy, so the subset never reads an answer differently: the test suite checks
this parser against latex2sympy on generated expressions.
"""

from __future__ import annotations

import re
from typing import Any

import sympy


class NotExpression(Exception):
    """Not in the subset this parser reads; use the general parser."""


_TOKEN = re.compile(
    r"\s*(?:(\d+\.\d+|\.\d+|\d+)|(\\[a-zA-Z]+|\\[{}|])|([A-Za-z])|([-+*/^_()\[\]{}|!]))"
)
_GREEK = frozenset(
    [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "varepsilon",
        "zeta",
        "eta",
        "theta",
        "vartheta",
        "iota",
        "kappa",
        "lambda",
        "mu",
        "nu",
        "xi",
        "rho",
        "sigma",
        "tau",
        "upsilon",
        "phi",
        "varphi",
        "chi",
        "psi",
        "omega",
        "Gamma",
        "Delta",
        "Theta",
        "Lambda",
        "Xi",
        "Sigma",
        "Phi",
        "Psi",
        "Omega",
    ]
)
_FUNCTIONS: dict[str, Any] = {
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "cot": sympy.cot,
    "sec": sympy.sec, "csc": sympy.csc, "arcsin": sympy.asin, "arccos": sympy.acos,
    "arctan": sympy.atan, "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh,
    "exp": sympy.exp,
}  # fmt: skip
_INVERSES = {"sin": sympy.asin, "cos": sympy.acos, "tan": sympy.atan}
MAX_TOKENS = 300


def parse(text: str) -> Any:
    """The sympy expression for ``text``; raises `NotExpression` outside the subset."""
    tokens = _tokenize(text)
    parser = _Parser(tokens)
    value = parser.expr()
    if parser.pos != len(tokens):
        raise NotExpression(f"unexpected {tokens[parser.pos]!r}")
    return value


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    while pos < len(text):
        found = _TOKEN.match(text, pos)
        if found is None:
            if text[pos:].strip():
                raise NotExpression(f"unexpected {text[pos : pos + 8]!r}")
            break
        token = found.group(found.lastindex or 0)
        if token in ("\\left", "\\right"):
            pos = found.end()
            continue  # \left( ... \right): the bracket that follows is the token
        tokens.append(token)
        pos = found.end()
        if len(tokens) > MAX_TOKENS:
            raise NotExpression("too long")
    return tokens


def _mul(*factors: Any) -> Any:
    return sympy.Mul(*factors, evaluate=False)


def _negate(value: Any) -> Any:
    """``-value``: a negative number for a number (``x^{-1}`` is ``x**-1``, as latex2sympy
    reads it), else ``-1 * value``."""
    return -value if isinstance(value, sympy.Number) else _mul(-1, value)


def _div(numerator: Any, denominator: Any) -> Any:
    """``a / b`` as latex2sympy builds it: ``a * b**-1``."""
    return _mul(numerator, sympy.Pow(denominator, -1, evaluate=False))


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.bars = 0  # open |...| groups: a `|` then closes rather than opens

    def peek(self, ahead: int = 0) -> str | None:
        at = self.pos + ahead
        return self.tokens[at] if at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise NotExpression(f"expected {expected!r}")
        self.pos += 1
        return token

    def expr(self) -> Any:
        terms = [self.signed_term()]
        while self.peek() in ("+", "-"):
            sign = self.take()
            term = self.term()
            terms.append(term if sign == "+" else _negate(term))
        return terms[0] if len(terms) == 1 else sympy.Add(*terms, evaluate=False)

    def signed_term(self) -> Any:
        if self.peek() == "-":
            self.take()
            return _negate(self.term())
        if self.peek() == "+":
            self.take()
        return self.term()

    def term(self, stop_at_function: bool = False) -> Any:
        value = self.power()
        while True:
            token = self.peek()
            if token in ("*", "\\cdot", "\\times"):
                self.take()
                value = _mul(value, self.power())
            elif token in ("/", "\\div"):
                self.take()
                denominator = self.power()
                if self._starts_factor(stop_at_function):
                    raise NotExpression("a/bc: whether c is in the denominator is unclear")
                value = _div(value, denominator)
            elif self._starts_factor(stop_at_function):
                if _ends_in_number(value) and (_is_number(token) or token == "\\frac"):
                    # "2 3", and "2\frac{1}{2}", which latex2sympy reads as a mixed number
                    raise NotExpression("a number next to a number or a fraction")
                value = _mul(value, self.power())
            else:
                return value

    def _starts_factor(self, stop_at_function: bool) -> bool:
        token = self.peek()
        if token is None:
            return False
        if token == "|":
            return self.bars == 0
        if token.startswith("\\"):
            name = token[1:]
            if stop_at_function and name in (*_FUNCTIONS, "ln", "log"):
                return False
            return name in _ATOMS or name in _FUNCTIONS or name in ("ln", "frac", "sqrt", "binom")
        return token in {"(", "{"} or token.isalpha() or _is_number(token)

    def power(self) -> Any:
        base = self.postfix()
        if self.peek() != "^":
            return base
        self.take()
        exponent = self.exponent()
        if base is sympy.E:
            return sympy.exp(exponent, evaluate=False)
        return sympy.Pow(base, exponent, evaluate=False)

    def exponent(self) -> Any:
        token = self.peek()
        if token == "{":
            return self.group()
        if token is not None and token.isdigit() and len(token) == 1:
            self.take()
            return sympy.Integer(token)
        if token is not None and len(token) == 1 and token.isalpha():
            self.take()
            return self.symbol(token)
        raise NotExpression("exponent")

    def postfix(self) -> Any:
        value = self.atom()
        while self.peek() == "!":
            self.take()
            value = sympy.factorial(value, evaluate=False)
        return value

    def group(self) -> Any:
        self.take("{")
        saved, self.bars = self.bars, 0
        value = self.expr()
        self.bars = saved
        self.take("}")
        return value

    def group_or_single(self) -> Any:
        """A braced group, or a single digit or letter (``\\frac12``, ``\\sqrt3``)."""
        token = self.peek()
        if token == "{":
            return self.group()
        if token is not None and token.isdigit():
            self.take()
            if len(token) > 1:  # \frac12: the first digit is the argument
                self.tokens[self.pos : self.pos] = [token[1:]]
            return sympy.Integer(token[0])
        if token is not None and len(token) == 1 and token.isalpha():
            self.take()
            return self.symbol(token)
        raise NotExpression("argument")

    def atom(self) -> Any:
        token = self.take()
        if _is_number(token):
            return sympy.Number(token)
        if token == "(":
            value = self.expr()
            self.take(")")
            return value
        if token == "{":
            self.pos -= 1
            return self.group()
        if token == "|":
            return self.absolute()
        if token.startswith("\\"):
            return self.command(token[1:])
        if len(token) == 1 and token.isalpha():
            if (
                self.peek() is not None
                and str(self.peek()).isalpha()
                and len(str(self.peek())) == 1
            ):
                raise NotExpression("letters side by side: a name or a product")
            return self.symbol(token)
        raise NotExpression(f"unexpected {token!r}")

    def absolute(self) -> Any:
        if self.bars:
            raise NotExpression("nested |...|")
        self.bars += 1
        value = self.expr()
        self.bars -= 1
        self.take("|")
        return sympy.Abs(value, evaluate=False)

    def symbol(self, letter: str) -> Any:
        if self.peek() == "_":
            self.take()
            token = self.take()
            if token == "{":
                parts = []
                while self.peek() != "}":
                    part = self.take()
                    if not part.isalnum():
                        raise NotExpression("subscript")
                    parts.append(part)
                self.take("}")
                return sympy.Symbol(f"{letter}_{{{''.join(parts)}}}")
            if not token.isalnum() or len(token) != 1:
                raise NotExpression("subscript")
            return sympy.Symbol(f"{letter}_{token}")
        if letter == "e":
            return sympy.E
        return sympy.Symbol(letter)

    def command(self, name: str) -> Any:
        if name in _ATOMS:
            return _ATOMS[name]
        if name in _GREEK:
            return sympy.Symbol(name)
        if name == "frac":
            numerator = self.group_or_single()
            return _div(numerator, self.group_or_single())
        if name == "sqrt":
            return self.sqrt()
        if name == "binom":
            n = self.group_or_single()
            return sympy.binomial(n, self.group_or_single(), evaluate=False)
        if name in _FUNCTIONS or name == "ln":
            return self.function(name)
        raise NotExpression(f"\\{name}")

    def sqrt(self) -> Any:
        if self.peek() == "[":
            self.take()
            degree = self.expr()
            self.take("]")
            radicand = self.group_or_single()
            return sympy.Pow(radicand, _div(1, degree), evaluate=False)
        return sympy.sqrt(self.group_or_single(), evaluate=False)

    def function(self, name: str) -> Any:
        power = None
        if self.peek() == "^":
            self.take()
            power = self.exponent()
        argument = self.argument()
        if power is not None and power == -1 and name in _INVERSES:
            return _INVERSES[name](argument, evaluate=False)
        value = (
            sympy.log(argument, sympy.E, evaluate=False)
            if name == "ln"
            else _FUNCTIONS[name](argument, evaluate=False)
        )
        return value if power is None else sympy.Pow(value, power, evaluate=False)

    def argument(self) -> Any:
        token = self.peek()
        if token == "(":
            self.take()
            value = self.expr()
            self.take(")")
            return value
        if token == "{":
            return self.group()
        if token in ("+", "-", None):
            raise NotExpression("function argument")
        return self.term(stop_at_function=True)


_ATOMS: dict[str, Any] = {"pi": sympy.pi, "infty": sympy.oo}


def _is_number(token: str | None) -> bool:
    return token is not None and (token[0].isdigit() or token[0] == ".")


def _ends_in_number(value: Any) -> bool:
    """Whether the product built so far ends in a plain number (so ``2 3`` is refused)."""
    last = value.args[-1] if isinstance(value, sympy.Mul) and value.args else value
    return isinstance(last, sympy.Number)
