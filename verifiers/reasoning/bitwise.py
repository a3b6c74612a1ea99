"""Our scorer for reasoning-gym's ``bitwise_arithmetic``, whose own scorer ``eval``s the
problem (client data, run as Python on the host).

The problem (``metadata.problem``, e.g. ``((0x7a5b >> 0x0) + (0x28ac << 0x2))``) is read
with ``ast`` and evaluated by a walk that knows only what the dataset generates: integer
literals, ``+ - * << >>``, unary ``-``/``+`` and parentheses, with Python's integer
semantics (arbitrary size, arithmetic right shift). Anything else, a negative shift, or
a value past `MAX_BITS` makes the reference ``invalid``. The answer is read as upstream
reads it, ``int(answer, 0)`` (``0x``/``0b``/``0o`` prefixes, a sign, decimal), and
scores 1.0 exactly when it equals the problem's value, as upstream's.
"""

from __future__ import annotations

import ast
from typing import Any

from referee.verifiers import syntax_tree
from referee.verifiers.base import ItemInvalid

MAX_PROBLEM_CHARS = 4096
MAX_BITS = 1 << 16
"""The largest value a problem may reach (the dataset's stay far below; a client's
``1 << 10**12`` would otherwise take the worker's memory)."""

_WHERE = "reference.entry.metadata.problem"


def score(answer: str | None, entry: dict[str, Any]) -> float:
    """1.0 when ``answer`` is the value of the entry's problem, else 0.0."""
    metadata = entry.get("metadata")
    problem = metadata.get("problem") if isinstance(metadata, dict) else None
    if not isinstance(problem, str):
        raise ItemInvalid("invalid_reference", f"{_WHERE}: expected the problem's text")
    value = value_of(problem)
    if answer is None:
        return 0.0
    try:
        given = int(answer.strip(), 0)
    except ValueError:
        return 0.0
    return float(given == value)


def value_of(problem: str) -> int:
    """The value of ``problem``; `ItemInvalid` naming the field for anything else."""
    if len(problem) > MAX_PROBLEM_CHARS:
        raise ItemInvalid("invalid_reference", f"{_WHERE}: over {MAX_PROBLEM_CHARS} characters")
    try:
        tree = syntax_tree.parse(problem.strip(), mode="eval")
        return _value(tree.body)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        message = f"{_WHERE}: not an integer expression of + - * << >> ({exc})"
        raise ItemInvalid("invalid_reference", message[:300]) from None


def _value(node: ast.expr) -> int:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return _bounded(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _value(node.operand)
        return -operand if isinstance(node.op, ast.USub) else operand
    if isinstance(node, ast.BinOp):
        left, right = _value(node.left), _value(node.right)
        return _bounded(_apply(node.op, left, right))
    raise ValueError(f"{type(node).__name__} is not allowed")


def _apply(op: ast.operator, left: int, right: int) -> int:
    if isinstance(op, ast.Add):
        return left + right
    if isinstance(op, ast.Sub):
        return left - right
    if isinstance(op, ast.Mult):
        return left * right  # both under MAX_BITS: the product is under twice that
    if isinstance(op, ast.LShift | ast.RShift):
        if right < 0:
            raise ValueError("negative shift count")
        if isinstance(op, ast.RShift):
            return left >> right
        if right + left.bit_length() > MAX_BITS:
            raise ValueError(f"a value over {MAX_BITS} bits")
        return left << right
    raise ValueError(f"{type(op).__name__} is not allowed")


def _bounded(value: int) -> int:
    if value.bit_length() > MAX_BITS:
        raise ValueError(f"a value over {MAX_BITS} bits")
    return value
