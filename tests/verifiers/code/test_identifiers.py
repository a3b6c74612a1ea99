"""Reading code through its shadow (`verifiers.code.identifiers`): brackets matched and
calls replaced, never inside a comment or a literal."""

from __future__ import annotations

import re

import pytest

from referee.verifiers.code import go_source, identifiers


@pytest.mark.parametrize(
    ("text", "at", "expected"),
    [
        ("(a, (b), [c])", 0, 12),
        ("f(x) { g(y) }", 5, 12),
        ("map[string][]int{}", 3, 10),
        ("(unclosed", 0, 9),
    ],
)
def test_closing(text: str, at: int, expected: int) -> None:
    assert identifiers.closing(text, at) == expected


def test_calls_replaced_only_where_the_code_calls() -> None:
    code = 'os.Exit(1) // os.Exit(2)\ns := "os.Exit(3)"\nos . Exit (4)\nmyos.Exit(5)'
    call = re.compile(r"(?<![\w.])os\s*\.\s*Exit\s*\(")
    done = identifiers.calls_replaced(code, go_source.masked(code), call, lambda _: "quit(")
    assert done == 'quit(1) // os.Exit(2)\ns := "os.Exit(3)"\nquit(4)\nmyos.Exit(5)'
