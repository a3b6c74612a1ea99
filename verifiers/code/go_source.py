"""What a Go program declares at package level, read for the functions its test takes
from it (`verifiers.code.boundary.go`). Go lets a package declare any of the universe
block's names (`PREDECLARED`).

Read with comments and literals blanked out (`masked`); declarations are found at brace
depth 0: ``func name`` (not a method), ``var``/``const`` name lists and ``type`` names,
grouped in parentheses or not.
"""

from __future__ import annotations

import re

from referee.verifiers.code import identifiers

PREDECLARED = frozenset((
    "any", "bool", "byte", "comparable", "complex64", "complex128", "error", "float32",
    "float64", "int", "int8", "int16", "int32", "int64", "rune", "string", "uint", "uint8",
    "uint16", "uint32", "uint64", "uintptr", "true", "false", "iota", "nil", "append",
    "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max",
    "min", "new", "panic", "print", "println", "real", "recover",
))  # fmt: skip
"""Go's universe block: names a package may declare anew."""

_LITERAL = re.compile(
    r'"(?:[^"\\\n]|\\.)*"|`[^`]*`|\'(?:[^\'\\\n]|\\.)+\'|//[^\n]*|/\*.*?(?:\*/|\Z)', re.S
)
_DECLARATION = re.compile(r"\b(func|var|const|type)\b\s*")
_NAME_LIST = re.compile(r"[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*")
_NAME = re.compile(r"[A-Za-z_]\w*")


def masked(code: str) -> str:
    """``code`` with comments and literals blanked (newlines kept)."""
    return _LITERAL.sub(identifiers.blank, code)


def as_command(code: str) -> str:
    """``code`` as package ``main``, which ``go build`` makes a command of: a missing
    package clause is added, another package's name replaced (an answer that left out
    ``package main`` or wrote ``package solution`` did not build)."""
    clause = _PACKAGE_CLAUSE.search(masked(code))
    if clause is None:
        return f"package main\n{code}"
    return f"{code[: clause.start(1)]}main{code[clause.end(1) :]}"


_PACKAGE_CLAUSE = re.compile(r"\A\s*package\s+([A-Za-z_]\w*)")


def package_names(code: str) -> list[str]:
    """The names ``code`` declares at package level (functions, variables, constants,
    types), in order, each once."""
    text = masked(code)
    depth = identifiers.brace_depths(text)
    names: list[str] = []
    read = 0  # the end of the last group read: a declaration inside one is not another
    for found in _DECLARATION.finditer(text):
        if depth[found.start()] != 0 or found.start() < read:
            continue
        keyword, at = found.group(1), found.end()
        if keyword == "func":
            name = _NAME.match(text, at)  # a method starts with its receiver: "("
            names += [name.group()] if name else []
        elif text.startswith("(", at):
            read = identifiers.closing(text, at)
            names += _grouped(text, at + 1, read, keyword, depth)
        else:
            names += _listed(text, at)
    return list(dict.fromkeys(names))


def _grouped(text: str, at: int, end: int, keyword: str, depth: list[int]) -> list[str]:
    """The names of a ``var (...)``, ``const (...)`` or ``type (...)`` group: each entry
    (a line, or after a semicolon, outside any braces: not a struct's fields) starts
    with its name list."""
    names: list[str] = []
    for entry in _ENTRY.finditer(text, at, end):
        if depth[entry.start()] != 0:
            continue
        if keyword == "type":
            name = _NAME.match(entry.group())
            names += [name.group()] if name else []
        else:
            names += _listed(entry.group(), 0)
    return names


_ENTRY = re.compile(r"[^\s;][^\n;]*")


def _listed(text: str, at: int) -> list[str]:
    found = _NAME_LIST.match(text, at)
    return _NAME.findall(found.group()) if found else []
