"""C programs with a test appended, run in their process (`verifiers.code.inprocess`), and
the reading of C and C++ source both share (literals, macros, ``main``); C++ tests run
in a sandbox of their own (`verifiers.code.boundary.cpp`).

The test's ``main`` is renamed and called from a ``main`` of ours, which shows the proof
(`verifiers.code.proof`) once the test returned and no assertion failed. The test's
``assert`` is ours, defined after the program's code (macros the program left are undone
first), and so is ``__assert_fail``, which glibc's ``assert`` calls when a test includes
``<assert.h>`` again.

A failed assertion ends the process at once, by raw system calls (a message to stderr,
then ``exit_group``): no handler the program installs sees it. A trap (SIGILL) could be
caught, and a program that restored its own data and bss segments from a snapshot in the
handler (the failure count with them) came back into its function and tried the next
answer: the test was an oracle (``tests/integrity/corpus/c/snapshot_retry.c``). The
sandbox keeps the program from installing a seccomp filter of its own, the one other way
to see a system call (`sandbox.seccomp`). On a host other than x86_64 the failure traps,
as before.
"""

from __future__ import annotations

import bisect
import platform
import re

from referee.sandbox import Program
from referee.verifiers.base import ItemInvalid
from referee.verifiers.code import identifiers
from referee.verifiers.code.proof import MARK, Proof


def build_c(setup: str, code: str, test: str, proof: Proof) -> Program:
    """``code`` then ``test`` as one C program showing ``proof``."""
    code = own_main_renamed(code)
    test_main = f"referee_test_main_{proof.name}"
    fail, failures = f"referee_fail_{proof.name}", f"referee_failures_{proof.name}"
    reset = undefined(code)
    header = "#include <assert.h>\n#include <stdio.h>\n#include <unistd.h>\n"
    call = f"((int (*)(int, char **)){test_main})(argc, argv)"
    message = '"Assertion failed: " #c "\\n"'
    # the nonce as two immediates: no string in the binary holds it
    high, low = proof.nonce >> 32, proof.nonce & 0xFFFFFFFF
    source = (
        f"{setup}\n{code}\n"
        f"/* referee: the test below runs in this process */\n{reset}\n{header}"
        f"#undef assert\nstatic volatile int {failures};\n"
        f"{_failing(fail, failures)}"
        f"#define assert(c) ((c) ? (void)0 : {fail}({message}, sizeof({message}) - 1))\n"
        f"{_assert_fail(fail)}"
        f"{rename_main(test, test_main)}\n"
        f"int main(int argc, char **argv) {{\n"
        f"    int status = {call};\n"
        f"    fflush(stdout);\n    fflush(stderr);\n"
        f"    if (status != 0) return status;\n"
        f"    if ({failures} != 0) return 1;\n"
        f'    printf("\\n{MARK}%08x%08x\\n", {high:#x}u, {low:#x}u);\n'
        f"    fflush(stdout);\n"
        f"    _exit({proof.status});\n}}\n"
    )
    return Program(language="c", source=source, keep_build=False)


def own_main_renamed(code: str) -> str:
    """``code`` with its own ``main`` (a demonstration) renamed: ours calls the test."""
    shadow = C_LITERAL.sub(identifiers.blank, code)
    if not identifiers.calls_or_defines(shadow, "main"):
        return code
    return identifiers.renamed(code, shadow, "main", identifiers.PROGRAM_MAIN)


def _failing(fail: str, failures: str) -> str:
    """The function a failed assertion calls: it counts, says so on stderr and ends the
    process, with system calls of its own (no libc function the program could replace)."""
    ending = _EXIT_NOW.get(platform.machine(), _TRAP_ONLY)
    return (
        f"static void __attribute__((__noreturn__, __noinline__))\n"
        f"{fail}(const char *what, unsigned long size) {{\n"
        f"    {failures}++;\n{ending}"
        "    for (;;) __builtin_trap();\n}\n"
    )


_EXIT_NOW = {
    "x86_64": (
        "    long nr = 1, fd = 2;  /* write(2, what, size) */\n"
        '    __asm__ __volatile__("syscall" : "+a"(nr) : "D"(fd), "S"(what), "d"(size)\n'
        '                         : "rcx", "r11", "memory");\n'
        "    nr = 231; fd = 1;  /* exit_group(1) */\n"
        '    __asm__ __volatile__("syscall" : "+a"(nr) : "D"(fd) : "rcx", "r11", "memory");\n'
    ),
}
"""Per host architecture: write the message and end the process by raw system calls."""
_TRAP_ONLY = "    (void)what; (void)size;\n"


def _assert_fail(fail: str) -> str:
    """Our ``__assert_fail``, for tests that include ``<assert.h>`` (glibc's ``assert``
    calls it); a program defining one too does not compile."""
    return (
        "void __assert_fail(const char *what, const char *file, unsigned int line,\n"
        "                   const char *function) {\n"
        "    unsigned long size = 0;\n    (void)file; (void)line; (void)function;\n"
        "    while (what[size]) size++;\n"
        f"    {fail}(what, size);\n}}\n"
    )


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


def overridden(code: str, test: str = "") -> list[str]:
    """The functions ``code`` defines that the test would call in place of its own or
    the library's: a definition outside any class or function named like a C library
    function tests compare through (`COMPARED_THROUGH`), or like a function the test
    defines. The program's is the one called: a C ``strcmp`` is the one linked, for the
    test's calls and the library's own; one finding every pair equal made every
    assertion hold. Used for C, whose tests run in the program's process (C++ tests run
    apart, and `boundary.cpp` finds stand-ins by compiling)."""
    names = COMPARED_THROUGH | (set(_functions(test)) - {"main"})
    found = [name for name in _functions(code) if name in names]
    return list(dict.fromkeys([*found, *_macro_made(code, names)]))


def _macro_made(code: str, names: frozenset[str] | set[str]) -> list[str]:
    """The program's macros that could make such a definition, which no scan of its
    text sees through, each as ``macro NAME``: one whose replacement names one or pastes
    tokens (``#define F fabs``, then ``double F(Half h)``), and a function-like one used
    outside any body (``DEF(issame)``, ``D(fabs)(Half h) {``), where a macro can only
    make declarations (one used inside a function, as ``FOR(i, n)`` is, cannot)."""
    text = C_LITERAL.sub(_blank, _CONTINUATION.sub("", code.replace("??=", "#")))
    made = []
    for found in _MACRO.finditer(text):
        body = found.group("body")
        if "##" in body or any(word in names for word in _IDENTIFIER.findall(body)):
            made.append(found.group("name"))
    plain = _DIRECTIVE.sub(lambda m: " " * len(m.group()), text)
    braces, outside = _scopes(plain)
    function_like = {m.group("name") for m in _MACRO.finditer(text) if m.group("params")}
    for use in _CALLED.finditer(plain):  # one pass, however many macros
        if use.group(1) in function_like and outside[bisect.bisect_left(braces, use.start())]:
            made.append(use.group(1))
    return [f"macro {name}" for name in dict.fromkeys(made)]


_MACRO = re.compile(
    r"(?m)^\s*(?:#|%:)\s*define\s+(?P<name>[A-Za-z_]\w*)(?P<params>\([^)\n]*\))?(?P<body>[^\n]*)"
)
_CALLED = re.compile(r"(?<![\w$])([A-Za-z_]\w*)\s*\(")
_DIRECTIVE = re.compile(r"(?m)^\s*(?:#|%:)[^\n]*")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def _functions(code: str) -> list[str]:
    """The functions ``code`` defines outside any class or function body."""
    text = C_LITERAL.sub(_blank, _CONTINUATION.sub("", code))
    braces, outside = _scopes(text)
    return [
        m.group("name")
        for m in _DEFINITION.finditer(text)
        if m.group("before") not in _NOT_TYPES
        and outside[bisect.bisect_left(braces, m.start("name"))]
    ]


COMPARED_THROUGH = frozenset((
    "strcmp", "strncmp", "strcasecmp", "strncasecmp", "strcoll", "strxfrm", "memcmp",
    "bcmp", "memchr", "memcpy", "memmove", "memset", "strlen", "strnlen", "strcpy",
    "strncpy", "strcat", "strncat", "strchr", "strrchr", "strstr", "strspn", "strcspn",
    "strpbrk", "strtok", "strdup", "wcscmp", "wcsncmp", "wcslen", "wmemcmp", "wmemcpy",
    "abs", "labs", "llabs", "fabs", "fabsf", "fabsl", "fmax", "fmin", "fmod", "round",
    "roundf", "lround", "llround", "floor", "ceil", "trunc", "sqrt", "pow", "exp", "log",
    "log10", "log2", "sin", "cos", "tan", "atan", "atan2", "hypot", "isnan", "isinf",
    "isfinite", "signbit", "copysign", "nearbyint", "rint", "qsort", "bsearch", "atoi",
    "atol", "atoll", "atof", "strtol", "strtoll", "strtoul", "strtoull", "strtod", "strtof",
    "isalpha", "isdigit", "isalnum", "isspace", "isupper", "islower", "ispunct", "isxdigit",
    "tolower", "toupper",
))  # fmt: skip
"""C library functions a test compares through, directly or by the library's own code
(a program naming its own function so is refused: one of these anew would be called)."""
# A name after a type (a word, a pointer, a template's `>`, a decltype's `)`), its
# parameters, then anything but a statement's end (noexcept, throw(), attributes) up to
# the body's brace.
_DEFINITION = re.compile(
    r"(?:(?P<before>[A-Za-z_]\w*)|[*&>)])\s*\b(?P<name>[A-Za-z_]\w*)\s*"
    r"\((?P<parameters>[^(){};]*)\)[^;{}]{0,256}\{"
)
_NOT_TYPES = frozenset((
    "return", "else", "case", "do", "if", "while", "for", "switch", "sizeof", "new",
    "delete", "throw", "goto",
))  # fmt: skip
_OPENER = re.compile(r"(?:\bextern\s*\"\"|\bnamespace(?:\s+[\w:]+)?)\s*$")
_OPENER_REACH = 128


def _scopes(text: str) -> tuple[list[int], list[bool]]:
    """Where ``text``'s braces are, and whether each stretch between them is outside any
    body: ``outside[i]`` holds before ``braces[i]`` (and ``outside[-1]`` after the last).
    Only ``extern "C" {`` and namespace blocks are not bodies (``text`` has its literals
    blanked, so ``"C"`` reads ``""``)."""
    braces, outside = [], [True]
    opened: list[bool] = []  # per open brace: whether it opens a body
    bodies = 0
    for brace in _BRACE.finditer(text):
        if brace.group() == "{":
            start = max(0, brace.start() - _OPENER_REACH)
            opened.append(_OPENER.search(text, start, brace.start()) is None)
            bodies += opened[-1]
        elif opened:
            bodies -= opened.pop()
        braces.append(brace.start())
        outside.append(bodies == 0)
    return braces, outside


_BRACE = re.compile(r"[{}]")


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
