"""What a compiler's errors say about a split test's own text: whether it parses.

A split test (`verifiers.code.harness`) is built with stubs made from the program's
signatures, so most of its build errors may be the program's (a function of the wrong
name or type is the program's 0). A *parse* error is not, in the languages whose grammar
does not depend on declarations (Go, Rust, Java): what the program brings to the test's
side (stubs of parsed types, its imports, which its own build holds too) parses wherever
it is put, so an error of the parser in the test's lines, or in the fixed code of ours
after them (a test left a brace open), is the reference's. C and C++ parse by their
declarations (``T * x;``, ``f<int>(x)``): there only what does not depend on them is
read, an error of the lexer (an unterminated literal or comment, a stray character), an
input that ends with a brace open, and a header that is not there (the program brings
only standard headers known to exist).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from referee.verifiers.code.boundary import declarations
from referee.verifiers.code.boundary.sides import SetupPlace


@dataclass(frozen=True)
class ParseError:
    """One error of the parser: its line in the built file and what it says."""

    line: int
    message: str
    anywhere: bool = False
    """The reference's wherever it is (a missing header: the program includes none)."""


_GO = r"(?m)^(?:\./)?{file}:(\d+):\d+: syntax error: (.*)$"
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

_JAVA = r"(?m)^{file}:(\d+): error: (.*)$"
_JAVA_PARSER = re.compile(
    r"(?!unexpected ).* expected|illegal start of (?:expression|type|statement)"
    r"|reached end of file while parsing|not a statement|unclosed (?:string|character|comment"
    r"|text block)|illegal character: |'else' without 'if'|orphaned (?:case|default)"
    r"|'(?:catch|finally)' without 'try'|illegal line end in character literal"
    r"|empty character literal|malformed floating-point literal|illegal unicode escape"
)
"""javac's parser errors (it stops before naming anything after one of them)."""

_GCC = r"(?m)^{file}:(\d+):\d+: (fatal error|error): (.*)$"
_GCC_LEXER = re.compile(
    r"missing terminating . character|unterminated comment|stray .{1,8} in program"
    r"|expected .{1,80} at end of input"
)
"""gcc's errors that no declaration changes: the lexer's, and an unclosed brace."""
_GCC_MISSING = re.compile(r".{1,256}: No such file or directory")


_MAIN_FILES = {
    "go": r"main\.go",
    "go_test": r"main(?:_test)?\.go",
    "java": r"Main\.java",
    "c": r"main\.c",
    "cpp": r"main\.cpp",
}


@cache
def _in_file(pattern: str, language: str, file: str | None) -> re.Pattern[str]:
    """``pattern`` for errors in ``file`` (None: ``language``'s main source)."""
    name = _MAIN_FILES[language] if file is None else re.escape(file)
    return re.compile(pattern.replace("{file}", name))


def parse_errors(language: str, output: str, file: str | None = None) -> list[ParseError]:
    """The parser's errors in ``file`` (None: the main source) that a build of
    ``language`` printed (``output``); for C and C++, only those no declaration
    changes. Rust's are read in its main source only."""
    if language in ("go", "go_test"):
        matches = [*_in_file(_GO, language, file).finditer(output)]
        if language == "go_test" and file is None:
            matches += _GO_TEST.finditer(output)
        return sorted((ParseError(int(m[1]), m[2]) for m in matches), key=lambda e: e.line)
    if language == "rust" and file is None:
        found = (ParseError(int(m[2]), m[1]) for m in _RUST.finditer(output))
        return [e for e in found if _RUST_PARSER.match(e.message)]
    if language == "java":
        found = (
            ParseError(int(m[1]), m[2]) for m in _in_file(_JAVA, language, file).finditer(output)
        )
        return [e for e in found if _JAVA_PARSER.fullmatch(e.message.strip())]
    if language in ("c", "cpp"):
        matched = _in_file(_GCC, language, file).finditer(output)
        return [e for e in map(_gcc_error, matched) if e is not None]
    return []


def _gcc_error(found: re.Match[str]) -> ParseError | None:
    line, kind, message = int(found[1]), found[2], found[3]
    if kind == "fatal error" and _GCC_MISSING.fullmatch(message):
        return ParseError(line, message, anywhere=True)
    return ParseError(line, message) if _GCC_LEXER.match(message) else None


def reference_parse_error(language: str, output: str, test_lines: range) -> ParseError | None:
    """The first parse error when the build failed on the test's own text: there is one,
    and none lies before ``test_lines``. What follows the test is ours and fixed (a
    ``main`` calling it): an error there is something the test left open. What comes
    before it (imports, stubs) is not read as the test's."""
    errors = parse_errors(language, output)
    if errors and all(e.anywhere or e.line >= test_lines.start for e in errors):
        return errors[0]
    return None


def setup_parse_error(
    language: str, output: str, place: SetupPlace, source: str = ""
) -> ParseError | None:
    """The first parse error in the lines of a side's build that hold the reference's
    setup (``place``), when its build failed there: the setup comes before anything of
    the program's that may not parse (Go's in a file of its own, which Go parses alone),
    and none of those errors depends on what follows (C's and C++'s are the lexer's, or
    a header the setup includes that is not there), so no program would build. On the
    test's side (Rust) the program's ``use`` lines come first: there only the build's
    first parse error counts, or a delimiter the setup opens and nothing closes. gcc's C
    does not say where an unclosed brace began: there the setup's own text (the lines of
    ``source``, the side's main source, that hold it) is read for one."""
    found = parse_errors(language, output, place.file)
    if place.side == "tester":
        found = sorted(found, key=lambda e: e.line)[:1]
    hit = next((e for e in found if e.line in place.lines), None)
    if hit is None and place.file is None:
        opened = [line for line in _unclosed(language, output) if line in place.lines]
        if not opened and language == "c" and _GCC_AT_END.search(output):
            opened = _c_unclosed(source, place.lines)
        hit = ParseError(opened[0], "a delimiter it opens is never closed") if opened else None
    return hit


_GCC_AT_END = re.compile(r"(?m)^main\.c:\d+:\d+: error: expected .{1,80} at end of input")


def _c_unclosed(source: str, lines: range) -> list[int]:
    """The lines (of ``source``) among ``lines`` where a brace opens that nothing in
    those lines closes, read past comments, literals and preprocessor lines (a
    ``#define`` may hold a brace); [] when one closes more than they open (not a setup
    of its own)."""
    text = "\n".join(source.split("\n")[lines.start - 1 : lines.stop - 1])
    opened: list[int] = []
    line = lines.start
    for char in declarations.shadow(text):
        if char == "\n":
            line += 1
        elif char == "{":
            opened.append(line)
        elif char == "}":
            if not opened:
                return []
            opened.pop()
    return opened[:1]


_GPP_UNCLOSED = re.compile(
    r"(?m)^main\.cpp:\d+:\d+: error: expected '}' at end of input\n(?:.*\n){0,3}?"
    r"main\.cpp:(\d+):\d+: note: to match this '\{'"
)


def _unclosed(language: str, output: str) -> list[int]:
    """Lines of the main source where a delimiter opens that nothing after it closes,
    as the compiler says (rustc's labels, g++'s "to match this" note; gcc's C says
    nothing of where)."""
    if language == "rust":
        return _rust_unclosed(output)
    if language == "cpp":
        return [int(m[1]) for m in _GPP_UNCLOSED.finditer(_plain_quotes(output))]
    return []


def _plain_quotes(output: str) -> str:
    """gcc's output with its typographic quotes (a UTF-8 locale's) made ASCII."""
    return output.translate({0x2018: "'", 0x2019: "'"})


_RUST_UNCLOSED = re.compile(
    r"(?ms)^error: this file contains an unclosed delimiter\n"
    r"\s*--> main\.rs:\d+:\d+\n(.*?)(?:\n\n|\Z)"
)
_SNIPPET_LINE = re.compile(r"\s*(\d+)\s*\|")
_UNCLOSED_LABEL = re.compile(r"\s*\|[\s^-]*unclosed delimiter")


def _rust_unclosed(output: str) -> list[int]:
    """The lines of the main source where rustc says a delimiter opened that nothing
    closes (the labels of its "unclosed delimiter" error; the error itself is at the end)."""
    lines = []
    for found in _RUST_UNCLOSED.finditer(output):
        current = None
        for text in found[1].splitlines():
            if text.lstrip().startswith(":::"):
                break  # a snippet of another file follows
            numbered = _SNIPPET_LINE.match(text)
            if numbered:
                current = int(numbered[1])
            elif current is not None and _UNCLOSED_LABEL.match(text):
                lines.append(current)
    return lines
