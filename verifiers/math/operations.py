"""Operations an answer leaves undone.

A definite integral, a sum, a product, a limit or a derivative in the answer is the
problem restated: ``\\sum_{k=1}^{100} k`` for "compute the sum" evaluates to the gold,
so a policy would learn to copy the question into the box. Such an answer is no final
answer, unless the gold keeps the same operation itself (a non-elementary integral, say).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import sympy

from referee.verifiers.math.parsing import Equation, Interval, Node, Scalar, Seq, SympyObject, Union

_OPERATIONS = {
    sympy.Integral: "an integral",
    sympy.Sum: "a sum",
    sympy.Product: "a product",
    sympy.Limit: "a limit",
    sympy.Derivative: "a derivative",
}


def undone(node: Node) -> set[str]:
    """What ``node`` leaves to evaluate: names from `_OPERATIONS` ("an integral", ...)."""
    found = set()
    for expr in _expressions(node):
        if isinstance(expr, sympy.Basic):
            found |= {name for kind, name in _OPERATIONS.items() if expr.has(kind)}
    return found


def _expressions(node: Node) -> Iterator[Any]:
    """Every sympy value inside ``node``."""
    if isinstance(node, Scalar):
        yield node.sympy()
    elif isinstance(node, Seq):
        for item in node.items:
            yield from _expressions(item)
    elif isinstance(node, Interval):
        yield from _expressions(node.lo)
        yield from _expressions(node.hi)
    elif isinstance(node, Union):
        for part in node.parts:
            yield from _expressions(part)
    elif isinstance(node, Equation):
        yield node.lhs_expr
        yield from _expressions(node.rhs)
    elif isinstance(node, SympyObject):
        yield node.value
