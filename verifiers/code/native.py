"""Reading C and C++ source for the programs of a split test (`verifiers.code.boundary.c`,
`verifiers.code.boundary.cpp`): literals and comments, the macros a program defines
(undone before code of ours follows it), and ``main`` (the program's renamed, the
test's renamed and called from a ``main`` of ours).
"""

from __future__ import annotations

import re

from referee.verifiers.base import ItemInvalid
from referee.verifiers.code import identifiers


def own_main_renamed(code: str) -> str:
    """``code`` with its own ``main`` (a demonstration) renamed: ours calls the test."""
    return identifiers.own_main_renamed(code, C_LITERAL.sub(identifiers.blank, code))


_RESET = (
    "NDEBUG", "assert", "main", "__builtin_trap", "_exit", "fflush", "printf", "stdout",
    "stderr", "exit", "int", "unsigned", "long", "const", "char", "void", "if", "while",
    "for", "return", "static", "volatile", "sizeof", "reinterpret_cast", "argc", "argv",
    "__asm__", "__volatile__", "__attribute__", "__noreturn__", "__noinline__",
)  # fmt: skip
"""Macros the program may have defined that would change the code appended after it."""


def undefined(code: str) -> str:
    """``#undef`` lines for the macros ``code`` defines and the ones it may have defined
    that code appended after it uses (`_RESET`)."""
    return "\n".join(f"#undef {macro}" for macro in dict.fromkeys([*_RESET, *defined(code)]))


def defined(code: str) -> list[str]:
    """Every name ``code`` defines as a macro, to be undefined before the test: a macro
    named like a function the test compares through (``#define fabs(x) 0``) made every
    assertion hold. Read as the preprocessor reads: ``%:`` and ``??=`` are ``#``, line
    continuations joined, comments and literals blanked; a directive split across lines
    by a comment is found too (an extra name undefined is harmless)."""
    text = code.replace("??=", "#").replace("??/", "\\")
    text = _CONTINUATION.sub("", text)
    text = C_LITERAL.sub(_blank, text)
    return _DEFINE.findall(text)


def _blank(literal: re.Match[str]) -> str:
    """A comment is one space (as the preprocessor reads it); a literal, an empty one."""
    return " " if literal.group().startswith(("/*", "//")) else '""'


_CONTINUATION = re.compile(r"\\[ \t]*\r?\n")
C_LITERAL = re.compile(
    # a C++ raw string first: `R"a(")/*")a"` once hid a `#define` after it in a "comment"
    r'(?:u8|[uUL])?R"(?P<delimiter>[^()\\\s]{0,16})\(.*?\)(?P=delimiter)"'
    r'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*.*?(?:\*/|\Z)',
    re.S,
)
_DEFINE = re.compile(r"(?m)^\s*(?:#|%:)\s*define\s+([A-Za-z_]\w*)")


_C_MAIN = re.compile(r"\bint\s+main\s*\(([^)]*)\)\s*\{")


def _close_brace(text: str, open_at: int) -> int:
    """The index of the brace closing the one at ``open_at`` (skipping strings, chars and
    comments); -1 when it never closes."""
    depth, i, n = 0, open_at, len(text)
    while i < n:
        ch = text[i]
        if ch in "\"'":
            i = _skip_quoted(text, i)
            continue
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _skip_quoted(text: str, start: int) -> int:
    quote, i = text[start], start + 1
    while i < len(text) and text[i] != quote:
        i += 2 if text[i] == "\\" else 1
    return i + 1


def rename_main(test: str, name: str) -> str:
    """``test`` with its ``main`` renamed to ``name`` and ending in ``return 0;`` (a
    renamed C++ ``main`` loses the implicit return; flowing off its end is undefined)."""
    found = _C_MAIN.search(test)
    if found is None:
        raise ItemInvalid("invalid_reference", "reference.test: no `int main(...) {` found")
    close = _close_brace(test, found.end() - 1)
    if close < 0:
        raise ItemInvalid("invalid_reference", "reference.test: main's body never closes")
    header = f"int {name}({found.group(1)}) {{"
    return (
        test[: found.start()] + header + test[found.end() : close] + "\nreturn 0;\n" + test[close:]
    )
