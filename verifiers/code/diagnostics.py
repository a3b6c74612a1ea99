"""What a compiler's errors say about a split test's own text: whether it parses.

A split test (`verifiers.code.harness`) is built with stubs made from the program's
signatures, so most of its build errors may be the program's (a function of the wrong
name or type is the program's 0). A *parse* error is not, in the languages whose grammar
does not depend on declarations (Go, Rust, Java): what the program brings to the test's
side (stubs of parsed types, its imports, which its own build holds too) parses wherever
it is put, so an error of the parser in the test's lines, or in the fixed code of ours
after them (a test left a brace open), is the reference's. C and C++ parse by their
declarations (``T * x;``, ``f<int>(x)``): there an error of any kind may be the
program's, and nothing is read here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ParseError:
    """One error of the parser: its line in the built file and what it says."""

    line: int
    message: str


_GO = re.compile(r"(?m)^(?:\./)?main(?:_test)?\.go:(\d+):\d+: syntax error: (.*)$")
"""The compiler's syntax errors (``./`` before the file under ``go build``)."""
_GO_TEST = re.compile(
    r"(?m)^main_test\.go:(\d+):\d+: ((?:expected |illegal character|.* not terminated).*)$"
)
"""``go test``'s: its package loading parses first, in ``go/parser``'s words."""

_RUST = re.compile(r"(?m)^error: (.*)\n\s*--> main\.rs:(\d+):\d+")
"""An error without a code (``error[E0425]`` is a type or name error), where it is."""
_RUST_PARSER = re.compile(
    r"(?:expected |unexpected |mismatched closing delimiter|this file contains an unclosed"
    r" delimiter|unknown start of token|unterminated |no rules expected )"
)
"""How rustc's parser and ``macro_rules`` matcher (the test's ``assert!`` arguments)
begin their errors."""

_JAVA = re.compile(r"(?m)^Main\.java:(\d+): error: (.*)$")
_JAVA_PARSER = re.compile(
    r"(?!unexpected ).* expected|illegal start of (?:expression|type|statement)"
    r"|reached end of file while parsing|not a statement|unclosed (?:string|character|comment"
    r"|text block)|illegal character: |'else' without 'if'|orphaned (?:case|default)"
    r"|'(?:catch|finally)' without 'try'|illegal line end in character literal"
    r"|empty character literal|malformed floating-point literal|illegal unicode escape"
)
"""javac's parser errors (it stops before naming anything after one of them)."""


def parse_errors(language: str, output: str) -> list[ParseError]:
    """The parser's errors in the main file that a build of ``language`` printed
    (``output``); none for a language whose parse depends on declarations (C, C++)."""
    if language in ("go", "go_test"):
        matches = [*_GO.finditer(output)]
        if language == "go_test":
            matches += _GO_TEST.finditer(output)
        return sorted((ParseError(int(m[1]), m[2]) for m in matches), key=lambda e: e.line)
    if language == "rust":
        found = (ParseError(int(m[2]), m[1]) for m in _RUST.finditer(output))
        return [e for e in found if _RUST_PARSER.match(e.message)]
    if language == "java":
        found = (ParseError(int(m[1]), m[2]) for m in _JAVA.finditer(output))
        return [e for e in found if _JAVA_PARSER.fullmatch(e.message.strip())]
    return []


def reference_parse_error(language: str, output: str, test_lines: range) -> ParseError | None:
    """The first parse error when the build failed on the test's own text: there is one,
    and none lies before ``test_lines``. What follows the test is ours and fixed (a
    ``main`` calling it): an error there is something the test left open. What comes
    before it (imports, stubs) is not read as the test's."""
    errors = parse_errors(language, output)
    if errors and all(e.line >= test_lines.start for e in errors):
        return errors[0]
    return None
