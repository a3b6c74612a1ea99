"""A JavaScript answer written as an ES module, read as the CommonJS module the linked
tests load with ``require`` (`verifiers.code.boundary.assembly`): ``export`` and
``import`` statements are syntax errors there, and a right answer that wrote ``export
function add`` scored 0.

Statement starts only (a line's first word), read with comments and literals blanked:
``export`` before a declaration is dropped (``export default function f`` is ``function
f``); ``export { ... }``, ``export default name;`` and ``export * from`` are dropped
(every top-level name is exported anyway); ``import x from "m"`` and ``import { a, b as
c } from "m"`` become ``require`` calls, ``import "m"`` a bare one.
"""

from __future__ import annotations

import re

LITERAL = re.compile(
    r"//[^\n]*|/\*.*?\*/|`(?:\\.|[^`\\])*`|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S
)
"""JavaScript's comments and literals (strings, template literals), one match each."""
_DECLARING = re.compile(
    r"(?m)^[ \t]*(export[ \t]+(?:default[ \t]+)?)"
    r"(?=(?:async[ \t]+)?function\b|class\b|const\b|let\b|var\b)"
)
_DROPPED = re.compile(
    r"(?m)^[ \t]*export[ \t]*(?:\{[^}]*\}(?:[ \t]*from[ \t]*\S+)?|\*[^;\n]*|default[ \t]+"
    r"[A-Za-z_$][\w$]*)[ \t]*;?"
)
_IMPORT = re.compile(
    r"(?m)^[ \t]*import[ \t]+(?:(?P<default>[A-Za-z_$][\w$]*)|(?P<names>\{[^}]*\})"
    r"|\*[ \t]+as[ \t]+(?P<all>[A-Za-z_$][\w$]*))[ \t]+from[ \t]*(?P<module>[\"'][^\"'\n]*[\"'])"
    r"[ \t]*;?"
)
_BARE_IMPORT = re.compile(r"(?m)^[ \t]*import[ \t]*(?P<module>[\"'][^\"'\n]*[\"'])[ \t]*;?")


def commonjs(code: str) -> str:
    """``code`` with its ES module statements made CommonJS (see the module docstring)."""
    shadow = LITERAL.sub(_blank, code)
    edits: list[tuple[int, int, str]] = []
    for found in _DECLARING.finditer(shadow):
        edits.append((found.start(1), found.end(1), ""))
    for found in _DROPPED.finditer(shadow):
        edits.append((found.start(), found.end(), ""))
    for found in _IMPORT.finditer(shadow):
        edits.append((found.start(), found.end(), _required(code, found)))
    for found in _BARE_IMPORT.finditer(shadow):
        module = code[found.start("module") : found.end("module")]
        edits.append((found.start(), found.end(), f"require({module});"))
    return _applied(code, edits)


def _blank(literal: re.Match[str]) -> str:
    """A comment blanked; a string's content blanked between its quotes, which stay (an
    import's module is found by them, and read from the code)."""
    text = literal.group()
    inner = re.sub(r"[^\n]", " ", text[1:-1])
    return re.sub(r"[^\n]", " ", text) if text[0] == "/" else f"{text[0]}{inner}{text[-1]}"


def _required(code: str, found: re.Match[str]) -> str:
    module = code[found.start("module") : found.end("module")]
    if found.group("default") or found.group("all"):
        name = found.group("default") or found.group("all")
        return f"const {name} = require({module});"
    names = found.group("names").replace(" as ", ": ")
    return f"const {names} = require({module});"


def _applied(code: str, edits: list[tuple[int, int, str]]) -> str:
    parts, last = [], 0
    for start, end, text in sorted(edits):
        if start < last:  # overlapping matches: the first one stands
            continue
        parts += [code[last:start], text]
        last = end
    return "".join([*parts, code[last:]])
