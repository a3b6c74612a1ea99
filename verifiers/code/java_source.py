"""One Java file from several: each side of an assert test (`boundary.java`) is compiled
as one ``Main.java``, the program's holding the reference's setup, the program and our
``Main``, the test's the setup, stub classes, the test and our ``Main``; Java only
accepts that when

- every ``import`` comes before the first type: imports are hoisted to the top (a test or
  a program after a setup may carry its own);
- no ``package`` is declared: a program's ``package com.example;`` would put every class
  of the file, the launcher's too, where ``java Main`` does not look;
- no top-level type but ``Main`` is ``public``: ``public class Solution``, as programs
  usually write it, must otherwise live in ``Solution.java``;
- only one class is called ``Main``: a program's own (a demonstration ``main``, say) is
  renamed, and so are the program's references to it.

Each step reads the code with its comments, strings, character literals and text blocks
blanked out (`masked`), so nothing inside them is touched.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from referee.verifiers.code import identifiers

_LITERAL = re.compile(
    r'"""(?:[^\\]|\\.)*?"""'  # text block
    r'|"(?:[^"\\\n]|\\.)*"'  # string
    r"|'(?:[^'\\\n]|\\.)+'"  # character
    r"|//[^\n]*"  # line comment
    r"|/\*.*?(?:\*/|\Z)",  # block comment
    re.S,
)
_IMPORTS = re.compile(
    r"(?m)^[ \t]*((?:import[ \t]+(?:static[ \t]+)?[\w. \t]+?(?:\.\s*\*)?\s*;\s*?)+)$"
)
_IMPORT = re.compile(r"import[ \t]+(?:static[ \t]+)?[\w. \t]+?(?:\.\s*\*)?\s*;")
_PACKAGE = re.compile(r"(?m)^[ \t]*package[ \t]+[\w.]+[ \t]*;")
_PUBLIC_TYPE = re.compile(
    r"\bpublic\s+(?=(?:(?:abstract|final|sealed|non-sealed|strictfp|static)\s+)*"
    r"(?:class|interface|enum|record|@interface)\b)"
)
_MAIN_TYPE = re.compile(r"\b(?:class|interface|enum|record)\s+Main\b")


def masked(code: str) -> str:
    """``code`` with every comment and literal blanked out (spaces, newlines kept), so
    that positions in it are positions in ``code``."""
    return _LITERAL.sub(identifiers.blank, code)


def hoisted(code: str) -> tuple[str, list[str]]:
    """``code`` without its ``import`` and ``package`` declarations, and its imports."""
    shadow = masked(code)
    imports: list[str] = []
    cuts: list[tuple[int, int]] = []
    for found in _IMPORTS.finditer(shadow):
        imports += [" ".join(i.split()) for i in _IMPORT.findall(found.group(1))]
        cuts.append(found.span(1))
    cuts += [found.span() for found in _PACKAGE.finditer(shadow)]
    return _cut(code, sorted(cuts)), imports


def unpackaged(code: str) -> str:
    """``code`` without its ``package`` declaration: a program run on its own is looked
    for in no package (``java Main``)."""
    return _cut(code, [found.span() for found in _PACKAGE.finditer(masked(code))])


def unpublished(code: str) -> str:
    """``code`` with the ``public`` modifier of its top-level types removed."""
    shadow = masked(code)
    depth = identifiers.brace_depths(shadow)
    cuts = [m.span() for m in _PUBLIC_TYPE.finditer(shadow) if depth[m.start()] == 0]
    return _cut(code, cuts)


def main_renamed(code: str, name: str) -> str:
    """``code`` with ``Main`` renamed ``name`` wherever it is a name (not in a string or
    a comment), when ``code`` declares a type of that name; else ``code``."""
    shadow = masked(code)
    if _MAIN_TYPE.search(shadow) is None:
        return code
    return identifiers.renamed(code, shadow, "Main", name)


def shadowing(
    code: str,
    test: str,
    setup: str,
    library: Mapping[str, frozenset[str]],
    inside: bool = False,
) -> list[str]:
    """The library types (``java.util.Arrays``) the program's types hide from the test:
    a type declared in the file wins over one imported on demand (``import
    java.util.*``, and ``java.lang``), so a program's ``Arrays`` would get the test's
    expected values in its ``asList``. Top-level types, or with ``inside`` (the test
    goes on inside the program's class, as MultiPL-E's do) types at any depth, since a
    member type wins there too. Names the setup or the test declare are theirs."""
    packages = ["java.lang"]
    for text in (setup, code, test):
        packages += [found.group(1) for found in _ON_DEMAND.finditer(masked(text))]
    used = set(_NAME.findall(masked(test)))
    ours = set(_top_level_types(setup)) | set(_TYPE.findall(masked(test)))
    return [
        f"{package}.{name}"
        for name in dict.fromkeys(_TYPE.findall(masked(code)) if inside else _top_level_types(code))
        if name in used and name not in ours
        for package in dict.fromkeys(packages)
        if name in library.get(package, ())
    ]


def open_class(code: str) -> str | None:
    """The top-level type ``code`` leaves open, for a test that goes on inside it and
    closes it (MultiPL-E's: ``public static void main`` and the class's ``}``); None
    when every brace closes, or more than one stays open."""
    shadow = masked(code)
    depth = identifiers.brace_depths(shadow)
    final = depth[-1] + (shadow[-1] == "{") - (shadow[-1] == "}") if shadow else 0
    if final != 1:
        return None
    types = [m.group(1) for m in _TYPE.finditer(shadow) if depth[m.start()] == 0]
    return types[-1] if types else None


def top_level_types(code: str) -> list[str]:
    """The types ``code`` declares at its top level (classes, interfaces, enums,
    records), in order."""
    return _top_level_types(code)


def unescaped(code: str) -> str:
    """``code`` with its Unicode escapes read, as javac reads them before anything else
    (one pass; a backslash is an escape's only after an even run of backslashes): a
    screen reading the source must see ``\\u0067etDeclaredFields`` as the compiler does."""
    return _UNICODE_ESCAPE.sub(lambda m: m.group(1) + chr(int(m.group(2), 16)), code)


_UNICODE_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u+([0-9a-fA-F]{4})")


def _top_level_types(code: str) -> list[str]:
    shadow = masked(code)
    depth = identifiers.brace_depths(shadow)
    return [m.group(1) for m in _TYPE.finditer(shadow) if depth[m.start()] == 0]


_ON_DEMAND = re.compile(r"\bimport\s+([\w.]+?)\s*\.\s*\*\s*;")
_TYPE = re.compile(r"\b(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)")
_NAME = re.compile(r"\b[A-Z][\w$]*")
_NOT_NEWLINE = re.compile(r"[^\n]")


def _cut(code: str, spans: list[tuple[int, int]]) -> str:
    """``code`` with the (sorted, disjoint) spans blanked out, lines kept (a compiler's
    line numbers still point at the right lines)."""
    parts, last = [], 0
    for start, end in spans:
        parts += [code[last:start], _NOT_NEWLINE.sub(" ", code[start:end])]
        last = end
    return "".join([*parts, code[last:]])
