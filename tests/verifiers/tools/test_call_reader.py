"""The quick call reader against the ``ast`` path it stands in for: on every text it does
not decline, it must give exactly what ``ast`` + ``literal_eval`` give (types included),
and it must decline whatever ``ast`` refuses."""

from __future__ import annotations

import ast
import warnings
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from referee.verifiers.tools import calls as calls_module
from referee.verifiers.tools.call_reader import read_calls


def typed(value: Any) -> Any:
    """``value`` with its types spelled out: 1, 1.0 and True differ; -0.0 is not 0.0."""
    if isinstance(value, list | tuple):
        return (type(value).__name__, [typed(v) for v in value])
    if isinstance(value, set | frozenset):
        return ("set", sorted(repr(typed(v)) for v in value))
    if isinstance(value, dict):
        return ("dict", [(typed(k), typed(v)) for k, v in value.items()])
    return (type(value).__name__, repr(value))


def by_ast(text: str) -> Any:
    """What the ``ast`` path reads, typed; None when it refuses the text."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            nodes = list(calls_module._call_nodes(text))
        found = []
        for node in nodes:
            if node.args or any(k.arg is None for k in node.keywords):
                return None
            arguments = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
            found.append((calls_module._dotted(node.func), typed(arguments)))
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None
    except calls_module.Unparsable:
        return None
    return found or None


def quick(text: str) -> Any:
    read = read_calls(text)
    return None if read is None else [(name, typed(args)) for name, args in read]


GOOD_ATOMS = [
    "1",
    "-1",
    "+2",
    "- 3",
    "2.5",
    "-2.5",
    "1e5",
    "1E-3",
    "1.",
    ".5",
    "0",
    "-0",
    "-0.0",
    "0.0",
    "00.5",
    "'a'",
    "' a b '",
    "'\tx '",
    "'1'",
    '"b"',
    "''",
    "'é'",
    "'a\"b'",
    '"a\'b"',
    "'#'",
    "True",
    "False",
    "None",
    "[]",
    "()",
    "{}",
    "(1)",
    "(1,)",
    "(1, 2)",
    "{1: 2}",
    "{1, 2}",
    "{1, 1.0}",
    "{'k': 1, 'k': 2}",
    "1e999",
    "[1,]",
    "99999999999999999999",
]
ODD_ATOMS = [
    "00",
    "01",
    "1_000",
    "0x1f",
    "1j",
    "1e",
    "1..2",
    "--1",
    "-(1)",
    "+True",
    "'a'",
    '"b"',
    "''",
    '""',
    "'a' 'b'",
    "r'x'",
    "b'x'",
    "f'x'",
    "'\\n'",
    "'a\\'b'",
    "'\x00'",
    "'\r'",
    "'é'",
    "'\ud800'",
    "'''t'''",
    "'#'",
    "'a\"b'",
    '"a\'b"',
    "True",
    "False",
    "None",
    "x",
    "...",
    "[]",
    "()",
    "{}",
    "(1)",
    "(1,)",
    "(1, 2)",
    "{1: 2}",
    "{1, 2}",
    "{1, 1.0}",
    "{'k': 1, 'k': 2}",
    "{[1]: 2}",
    "{(1, [2])}",
    "#c",
    "1 # c",
    "\\\n1",
    "lambda: 1",
    "f()",
    "*x",
    "**x",
    "1if 1else 2",
    "99999999999999999999",
    "1" * 5000,
    "[,]",
    "(,)",
    "{,}",
    "{1:}",
    "{:1}",
]
SPACES = ["", " ", "\n", "\t", "  \n  "]
ODD_SPACES = ["\r", "\xa0", "\f", "\v"]
NAMES = ["f", "pkg.f", "a.b.c", "f .g", "_", "match", "f1"]
ODD_NAMES = ["class", "True", "None", "é", "\ufb01", "1f", "f.", "f..g"]
KEYS = ["a", "b", "c", "x1", "_", "print", "match"]
ODD_KEYS = ["if", "a", "True", "1a", "é", "\ufb01"]


def mostly(good: list[str], odd: list[str]) -> st.SearchStrategy[str]:
    """Usually a well-formed piece, now and then one the grammar or Python refuses."""
    return st.sampled_from(good * 12 + odd)


ATOMS = mostly(GOOD_ATOMS, ODD_ATOMS)
SPACE = mostly(SPACES, ODD_SPACES)
NAME = mostly(NAMES, ODD_NAMES)
KEY = mostly(KEYS, ODD_KEYS)


@st.composite
def values(draw: st.DrawFn, depth: int = 0) -> str:
    if depth >= 3 or draw(st.booleans()):
        return draw(ATOMS)
    inner = draw(st.lists(values(depth + 1), max_size=3))
    space = draw(SPACE)
    kind = draw(st.sampled_from(["list", "tuple", "dict", "set"]))
    trailing = draw(st.sampled_from(["", ","]))
    if kind == "dict":
        keys = draw(st.lists(values(depth + 1), min_size=len(inner), max_size=len(inner)))
        body = ", ".join(f"{k}:{space}{v}" for k, v in zip(keys, inner, strict=True))
        return "{" + body + trailing + "}"
    opener, closer = {"list": ("[", "]"), "tuple": ("(", ")"), "set": ("{", "}")}[kind]
    return opener + f",{space}".join(inner) + trailing + closer


@st.composite
def call_texts(draw: st.DrawFn) -> str:
    def one_call() -> str:
        name = draw(NAME)
        arguments = [
            f"{draw(KEY)}{draw(mostly(['=', ' = '], ['==', ':', '']))}{draw(values())}"
            for _ in range(draw(st.integers(0, 3)))
        ]
        if draw(st.integers(0, 12)) == 12:
            arguments.insert(0, draw(values()))  # positional
        space = draw(SPACE)
        return f"{name}({f',{space}'.join(arguments)}{draw(st.sampled_from(['', ',']))})"

    calls = [one_call() for _ in range(draw(st.integers(1, 3)))]
    shape = draw(mostly(["list", "single"], ["lines", "tuple", "bare"]))
    if shape == "list":
        return "[" + ", ".join(calls) + draw(st.sampled_from(["", ","])) + "]"
    if shape == "single":
        return calls[0]
    if shape == "lines":
        return "\n".join(calls)
    if shape == "tuple":
        return "(" + ", ".join(calls) + ")"
    return ", ".join(calls)


@settings(max_examples=2000, deadline=None, derandomize=True)  # the same draws each run
@given(call_texts())
@example("[f(a=1, b='x'), g.h(c=[1, 2.5, {'k': None}], d=(True,))]")
@example("f(a=-0.0, b=00.5, c={1, 1.0}, d={'k': 1, 'k': 2})")
@example("f(a='\x00')")
@example("f(a=1, a=2)")
@example("f(class=1)")
@example("\ufb01(\ufb01=1)")  # NFKC: Python reads the names as "fi"
def test_the_quick_reader_reads_what_ast_reads_or_declines(text: str) -> None:
    fast = quick(text)
    if fast is not None:
        assert fast == by_ast(text), text


@pytest.mark.parametrize(
    "text",
    [
        "[calculate_triangle_area(base=10, height=5, unit='units')]",
        "f(a=[1, [2, [3, {'x': (4, 5.5, -6)}]]], b=None, c=True, d=\"q'\")",
        "[\n  f(a=1),\n  g(b=2),\n]",
        "pkg.sub.f()",
        "f(a=1e999, b=.5, c=1., d=+7)",
    ],
)
def test_common_shapes_take_the_quick_path(text: str) -> None:
    assert quick(text) is not None
    assert quick(text) == by_ast(text)


@pytest.mark.parametrize(
    "text",
    [
        "f(1)",  # positional: the ast path explains the refusal
        "f(a=x)",  # a name is not a literal
        "f(a=1)\ng(b=2)",  # several lines: the ast path reads them
        "f(a=1_000)",
        "f(a=r'x')",
        "f(a='x' 'y')",
        "f(a=1, a=2)",
        "f(if=1)",
        "f(a={[1]: 2})",
        "f(a=" + "[" * 100 + "]" * 100 + ")",
        "f(a='\ud800')",
        "f(a=1) # done",
    ],
)
def test_declined_shapes_are_left_to_ast(text: str) -> None:
    assert read_calls(text) is None
