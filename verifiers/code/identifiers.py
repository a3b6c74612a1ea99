"""Renaming a name in program text, never inside its comments or literals: a program's
own ``main`` (a demonstration beside the function asked for) is renamed so that it does
not collide with the launcher's when a test is appended to the program."""

from __future__ import annotations

import re

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


def calls_or_defines(shadow: str, name: str) -> bool:
    """Whether ``name`` appears followed by a parenthesis (a definition or a call)."""
    return re.search(rf"(?<![\w$]){re.escape(name)}\s*\(", shadow) is not None


_PACKAGE_CLAUSE = re.compile(r"\bpackage\s+$")
