"""Reading program text with its comments and literals blanked (a "shadow" of the same
length, newlines kept, so positions in it are positions in the code): how deep braces
nest, where a bracket closes, renaming a name and replacing a call, never inside a
comment or a literal (a program's own ``main``, a demonstration beside the function
asked for, is renamed so that it does not collide with the ``main`` of ours that
serves it; a test's ``os.Exit`` becomes the harness's). Each language's
module blanks its own literals (`java_source`, `go_source`, `rust_source`, ...)."""

from __future__ import annotations

import re
from collections.abc import Callable

PROGRAM_MAIN = "referee_program_main"
"""What a program's own ``main`` becomes."""


def renamed(code: str, shadow: str, old: str, new: str) -> str:
    """``code`` with the name ``old`` renamed ``new`` wherever ``shadow`` (``code`` with
    its comments and literals blanked, position for position) shows it as a whole word,
    except a Go package clause's (``package main`` stays)."""
    word = re.compile(rf"(?<![\w$]){re.escape(old)}(?![\w$])")
    parts, last = [], 0
    for found in word.finditer(shadow):
        if _PACKAGE_CLAUSE.search(shadow, max(0, found.start() - 64), found.start()):
            continue
        parts += [code[last : found.start()], new]
        last = found.end()
    return "".join([*parts, code[last:]])


def own_main_renamed(code: str, shadow: str) -> str:
    """``code`` with its own ``main`` (a demonstration beside the function asked for)
    renamed `PROGRAM_MAIN`: the ``main`` is ours (a Go ``package main`` stays)."""
    if not calls_or_defines(shadow, "main"):
        return code
    return renamed(code, shadow, "main", PROGRAM_MAIN)


def calls_replaced(code: str, shadow: str, call: re.Pattern[str], new: Callable[[str], str]) -> str:
    """``code`` with every match of ``call`` in ``shadow`` (a callee and its opening
    parenthesis, never inside a comment or a literal) replaced by ``new(matched text)``:
    a test's ``os.Exit(`` made the harness's ``referee_exit(``."""
    parts, last = [], 0
    for found in call.finditer(shadow):
        parts += [code[last : found.start()], new(found.group())]
        last = found.end()
    return "".join([*parts, code[last:]])


def closing(shadow: str, at: int) -> int:
    """The index of the bracket (any of ``([{``) closing the one at ``at`` in ``shadow``
    (its end when none does)."""
    depth = 0
    for index in range(at, len(shadow)):
        depth += (shadow[index] in "([{") - (shadow[index] in ")]}")
        if depth == 0:
            return index
    return len(shadow)


def blank(literal: re.Match[str]) -> str:
    """A matched comment or literal as spaces, its newlines kept (for ``re.sub``)."""
    return blanked(literal.group())


def blanked(text: str) -> str:
    """``text`` as spaces, its newlines kept."""
    return _NOT_NEWLINE.sub(" ", text)


def brace_depths(shadow: str) -> list[int]:
    """The brace depth at every position of ``shadow``."""
    depths, depth = [], 0
    for char in shadow:
        depths.append(depth)
        depth += (char == "{") - (char == "}")
    return depths


def calls_or_defines(shadow: str, name: str) -> bool:
    """Whether ``name`` appears followed by a parenthesis (a definition or a call)."""
    return re.search(rf"(?<![\w$]){re.escape(name)}\s*\(", shadow) is not None


_PACKAGE_CLAUSE = re.compile(r"\bpackage\s+$")
_NOT_NEWLINE = re.compile(r"[^\n]")
