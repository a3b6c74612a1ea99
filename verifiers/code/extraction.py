"""Find the program in a model's response.

Rule, in order: the last fenced block (```` ```lang ````) whose info string names the
requested language (or one of its aliases); when no language is requested, the last
fenced block of any language; when the response has no fence at all, the whole response
(some prompts ask for bare code). A response whose extracted code is blank has no code.

Asymmetry on purpose: when a language *is* requested and fenced blocks exist but none is
tagged with it, the last *untagged* block is taken (models often omit the tag), never a
block tagged with another language.

A Python answer followed by a usage example (``print(add(1, 2))`` in a block of its
own) is read by what the tests call: when ``wanted`` names them, the last of the blocks
considered that defines one of them at its top level is taken, if the last block does
not (among the last `LOOKED_BACK` blocks).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Literal

from referee.sandbox import languages
from referee.verifiers import syntax_tree

# An opening fence of 3+ backticks or tildes, an optional info string, the body, and a
# closing fence of the same kind at least as long. An unclosed final fence runs to the end
# of the text (truncated generations are common in RL).
_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)\n(?P<body>.*?)"
    r"(?:^[ \t]*(?P=fence)[`~]*[ \t]*$|\Z)",
    re.MULTILINE | re.DOTALL,
)

Source = Literal["fenced", "whole_response", "none"]


@dataclass(frozen=True)
class Extraction:
    """The code found (empty when ``source`` is ``none``) and where it came from."""

    code: str
    source: Source
    tag: str = ""


def tags_for(language: str) -> frozenset[str]:
    """Fence tags accepted for the sandbox ``language``: its name and its aliases (one
    table, `sandbox.languages`, for both the ``language`` param and fence tags), and for
    a test-runner mode those of the language its tests are written in (`fence_of`)."""
    lang = languages.find(language)
    if lang is None:
        return frozenset({language})
    base = languages.find(lang.fence_of) if lang.fence_of else None
    own = {lang.name, *lang.aliases}
    return frozenset(own if base is None else {*own, base.name, *base.aliases})


LOOKED_BACK = 8
"""Blocks read for the one defining what the tests call (each is parsed)."""


def extract_code(
    text: str, language: str | None, wanted: frozenset[str] = frozenset()
) -> Extraction:
    """Extract the program from ``text`` (untrusted model output) for ``language``
    (a sandbox language name, or None for any); ``wanted``: the names a Python program's
    tests call. See the module docstring."""
    blocks = _blocks(text)
    if not blocks:
        return _found(text, "whole_response", "")
    if language is None:
        chosen = blocks[-1]
    else:
        tags = tags_for(language)
        tagged = [b for b in blocks if b[0] in tags]
        untagged = [b for b in blocks if not b[0]]
        if not (tagged or untagged):
            return Extraction("", "none")
        candidates = tagged or untagged
        chosen = candidates[-1]
        if wanted and language == "python3":
            chosen = _defining(candidates, wanted) or chosen
    return _found(chosen[1], "fenced", chosen[0])


def _defining(blocks: list[tuple[str, str]], wanted: frozenset[str]) -> tuple[str, str] | None:
    """The last of ``blocks`` (among the last `LOOKED_BACK`) whose top level defines a
    name in ``wanted``, when the very last parses and does not; else None (a last block
    that does not parse is the answer, broken: its 0, never an earlier draft's score)."""
    recent = blocks[-LOOKED_BACK:]
    if _defines(recent[-1][1], wanted) is not False:
        return None
    return next((b for b in reversed(recent[:-1]) if _defines(b[1], wanted)), None)


def _defines(code: str, wanted: frozenset[str]) -> bool | None:
    """Whether ``code``'s top level defines a name in ``wanted``; None: it does not parse."""
    try:
        tree = syntax_tree.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name in wanted:
                return True
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in wanted for t in targets):
                return True
    return False


def extract_any(text: str) -> tuple[Extraction, str | None]:
    """For a response free to pick its language: the last fenced block tagged with a
    sandbox language (or alias) and that language's name; else the last untagged block,
    or the whole response when there is no fence, with None (the caller's default). A
    block tagged with something else (``text``, ``output``) is never the program."""
    blocks = _blocks(text)
    if not blocks:
        return _found(text, "whole_response", ""), None
    known = [(lang, tag, body) for tag, body in blocks if tag and (lang := languages.find(tag))]
    if known:
        lang, tag, body = known[-1]
        return _found(body, "fenced", tag), lang.name
    untagged = [body for tag, body in blocks if not tag]
    if untagged:
        return _found(untagged[-1], "fenced", ""), None
    return Extraction("", "none"), None


def _blocks(text: str) -> list[tuple[str, str]]:
    """(tag, body) of every fenced block, in order; the tag is the info string's first
    word, lower-cased. A fence indented by N spaces (in a list item) takes up to N spaces
    off each line of its body, as CommonMark does: ``    def f`` would not parse."""
    return [
        (m.group("info").strip().split(" ")[0].lower(), _outdented(m.group("body"), m["indent"]))
        for m in _FENCE.finditer(text)
    ]


def _outdented(body: str, indent: str) -> str:
    if not indent:
        return body
    most = len(indent)
    return "".join(_outdent_line(line, most) for line in body.splitlines(keepends=True))


def _outdent_line(line: str, most: int) -> str:
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, most) :]


def _found(code: str, source: Source, tag: str) -> Extraction:
    if not code.strip():
        return Extraction("", "none", tag)
    return Extraction(code, source, tag)
