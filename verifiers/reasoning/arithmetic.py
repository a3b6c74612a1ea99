"""Our own scorers for reasoning-gym's arithmetic games, whose scorers evaluate the answer
with sympy's ``parse_expr`` (running whatever code the answer holds) and accept any
expression reaching the target from numbers in range (puzzle24).

The answer is parsed by the safe formula parser (`verifiers.rules.formula`: numbers,
``+ - * /`` and parentheses; no names, no functions, no powers), every given number must
be used exactly once (as an integer literal, negation aside) and no other number may
appear, and the value must equal the target (within 1e-6).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from typing import Any

from referee.verifiers.base import ItemInvalid
from referee.verifiers.rules.formula import (
    Call,
    Chain,
    Expr,
    FormulaError,
    Name,
    Negate,
    Number,
    Power,
    evaluate,
    parse,
)


def solves(answer: str, numbers: list[int], target: float) -> bool:
    """Whether ``answer`` reaches ``target`` using each of ``numbers`` exactly once."""
    text = answer.strip().rstrip("=").strip()
    if "=" in text:  # "8*3 = 24": the expression is the left side
        text = text.split("=", 1)[0]
    try:
        expr = parse(text)
    except FormulaError:
        return False
    literals = list(_literals(expr))
    if any(x is None for x in literals):
        return False
    if Counter(literals) != Counter(int(n) for n in numbers):
        return False
    try:
        value = evaluate(expr, {})
    except FormulaError:
        return False
    return math.isclose(value, float(target), rel_tol=0.0, abs_tol=1e-6)


def _literals(expr: Expr) -> Iterator[int | None]:
    """The integer literals of ``expr``; None for anything not allowed (names, calls,
    powers, non-integers)."""
    match expr:
        case Number(value):
            yield int(value) if float(value).is_integer() else None
        case Negate(operand):
            yield from _literals(operand)
        case Chain(first, rest):
            yield from _literals(first)
            for _, operand in rest:
                yield from _literals(operand)
        case Name() | Call() | Power():
            yield None
        case _:
            yield None


def numbers_of(entry: dict[str, Any]) -> list[int]:
    """The puzzle's numbers from a reasoning-gym entry (``metadata.numbers``); `ItemInvalid`
    naming the field when they are not a list of integers."""
    numbers = entry.get("metadata", {}).get("numbers")
    if not isinstance(numbers, list) or not all(isinstance(n, int) for n in numbers):
        message = "reference.entry.metadata.numbers: expected a list of integers"
        raise ItemInvalid("invalid_reference", message)
    return numbers
