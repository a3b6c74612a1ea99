"""`verifiers.syntax_tree.parse` is ``ast.parse``, one thread at a time.

The race it closes (CPython <= 3.11.7: "AST constructor recursion depth mismatch" when
two threads convert trees at once) was seen once in a full run under load and could not
be provoked on demand here; these tests hold the wrapper to ``ast.parse``'s contract.
"""

from __future__ import annotations

import ast
from concurrent.futures import ThreadPoolExecutor

import pytest

from referee.verifiers import syntax_tree

SOURCES = [
    f"def f{i}(x):\n    return [y * {i} for y in range(x) if y % 3]\n" * 20 for i in range(8)
]


def test_parses_from_many_threads_equal_a_plain_parse() -> None:
    with ThreadPoolExecutor(max_workers=8) as pool:
        trees = list(pool.map(syntax_tree.parse, SOURCES * 25))
    assert [ast.dump(t) for t in trees] == [ast.dump(ast.parse(s)) for s in SOURCES * 25]


def test_modes_and_errors_are_ast_parses() -> None:
    expression = syntax_tree.parse("1 << 3", mode="eval")
    assert isinstance(expression, ast.Expression)
    assert ast.literal_eval(syntax_tree.parse("[1, 2]", mode="eval")) == [1, 2]
    with pytest.raises(SyntaxError):
        syntax_tree.parse("def (")
