"""Assert tests for languages other than Python: the test is appended to the program and
runs in its process, so this module hardens that run as far as one process allows.

- **Completion proof** (`Proof`): the test's ``main`` is renamed (to a random name that
  says nothing of the proof) and called from a ``main`` of ours that, once it returned and
  no assertion failed, prints a line holding a random 64-bit nonce and exits with a random
  status; any other ending, an early ``exit(0)`` or a guessed status included, is not a
  pass. C, C++, Go and Rust have both compiled into the binary (the sources are gone from
  the sandbox before the program runs; no name or string in it holds them); Java's
  launcher reads them from standard input, before any of the program's code runs, into
  locals no reflection reaches.
- **Assertions the program cannot switch off**: C and C++ get ``#undef NDEBUG`` and an
  ``assert`` of ours, placed after the program's code, that counts failures and traps
  (``__builtin_trap``, not a libc function a program could replace); Rust gets its
  ``assert!`` family re-bound to ``std``'s; Java runs with ``-ea``.
- **Equality the program cannot define**: a program that defines equality or
  comparison for its own types (C++ ``operator==``, Java ``equals``, Rust ``impl
  PartialEq``) scores 0 with flag ``custom_eq``, since the appended test would compare
  through it.

What one process cannot prevent is stated in docs/security.md: a program may read its
own memory, where the compiled test lives. Results carry the flag ``in_process_tests``.
Python, JavaScript and bash tests run in a second sandbox instead
(`verifiers.code.boundary`) and are not affected.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from referee.sandbox import Case, Program
from referee.verifiers.base import ItemInvalid

FAILURE_STATUSES = frozenset({101})
"""Exit statuses a language gives a failing test on its own: Rust's panic (a failed
``assert!``) exits 101. (Go's panic exits 2; C and C++ traps and aborts are signals.)"""
PROOF_STATUSES = tuple(s for s in range(3, 120) if s not in FAILURE_STATUSES)
"""A proof is never a failure's status: with 101 among them, a Rust program whose
assertion failed passed once in 117 runs (a wrong answer scored 1.0 in the hack corpus)."""


MARK = "referee-proof-"
"""Starts the line that proves completion; the 16 hex digits of the nonce follow."""


@dataclass(frozen=True)
class Proof:
    """What proves an in-process test ran to its end: the process exits with ``status``
    and its standard output ends with ``marker``. ``label`` names the renamed test
    ``main`` and is drawn apart, so reading a name reveals nothing of the proof.

    The status alone is ~7 bits: a wrong program exiting with a guessed status passed
    once in 116 runs. The nonce makes a guess hopeless (2**-64)."""

    status: int
    nonce: int
    label: int

    @classmethod
    def drawn(cls) -> Proof:
        """A fresh random proof (per scored item)."""
        status = PROOF_STATUSES[secrets.randbelow(len(PROOF_STATUSES))]
        return cls(status, secrets.randbits(64), secrets.randbits(48))

    @property
    def marker(self) -> str:
        return f"\n{MARK}{self.nonce:016x}\n"

    @property
    def name(self) -> str:
        """The random suffix of the renamed test's identifiers."""
        return f"{self.label:012x}"

    def shown(self, exit_code: int | None, stdout: str) -> bool:
        """Whether a run ended as only a completed test ends."""
        return exit_code == self.status and stdout.endswith(self.marker)


@dataclass(frozen=True)
class _Rules:
    build: Callable[[str, str, str, Proof], Program]
    custom_eq: re.Pattern[str] | None
    unsafe: re.Pattern[str] | None = None
    """Code that reaches memory or calls by address, with which a program could call
    the test it is part of and recover from its failures (Go, Rust; C and C++ cannot be
    kept from it, see docs/security.md)."""


def check_language(language: str) -> None:
    """Raise `ItemInvalid` when appended tests are not supported for ``language``."""
    if language not in _LANGUAGES:
        supported = ", ".join(sorted(["python3", *_LANGUAGES]))
        raise ItemInvalid(
            "invalid_params",
            f"params.language: assert-style tests run for {supported}; "
            f"for {language} give stdin/stdout tests",
        )


def program(language: str, setup: str, code: str, test: str, proof: Proof) -> Program:
    """The program that runs ``test`` after ``code`` and shows ``proof`` once it
    completed. Raises `ItemInvalid` for an unsupported language."""
    check_language(language)
    return _LANGUAGES[language].build(setup, code, test, proof)


def case(language: str, proof: Proof) -> Case:
    """The one run of an in-process test: Java's launcher reads the proof from stdin."""
    return Case(stdin=f"{proof.status} {proof.nonce:016x}\n" if language == "java" else "")


def refusal(language: str, code: str) -> tuple[str, str] | None:
    """Why ``code`` is not run with a test in its process, as (flag, message), or None:
    it defines equality for its own types (the test would compare through it), or it
    uses unsafe code (it could call the test and recover from its failures)."""
    rules = _LANGUAGES.get(language)
    if rules is None:
        return None
    bare = _strip_comments(code)
    if rules.custom_eq and rules.custom_eq.search(bare):
        return "custom_eq", (
            "the program defines equality for its own types, through which the test "
            "appended to it would compare; it is not run"
        )
    if rules.unsafe and rules.unsafe.search(bare):
        return "unsafe_code", (
            "the program uses unsafe code, with which it could call the test appended to "
            "it; it is not run"
        )
    return None


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _strip_comments(code: str) -> str:
    return _COMMENTS.sub(" ", code)


# --- C and C++ -------------------------------------------------------------------------------

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


def _rename_c_main(test: str, name: str) -> str:
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


def _c_family(cpp: bool) -> Callable[[str, str, str, Proof], Program]:
    def build(setup: str, code: str, test: str, proof: Proof) -> Program:
        test_main, failures = f"referee_test_main_{proof.name}", f"referee_failures_{proof.name}"
        reset = "\n".join(f"#undef {macro}" for macro in _C_RESET)
        header = (
            "#include <cassert>\n#include <cstdio>\n#include <unistd.h>\n"
            if cpp
            else ("#include <assert.h>\n#include <stdio.h>\n#include <unistd.h>\n")
        )
        call = (
            f"reinterpret_cast<int (*)(int, char **)>(&{test_main})(argc, argv)"
            if cpp
            else f"((int (*)(int, char **)){test_main})(argc, argv)"
        )
        # the nonce as two immediates: no string in the binary holds it
        high, low = proof.nonce >> 32, proof.nonce & 0xFFFFFFFF
        source = (
            f"{setup}\n{code}\n"
            f"/* referee: the test below runs in this process */\n{reset}\n{header}"
            f"#undef assert\nstatic volatile int {failures};\n"
            f"#define assert(c) ((c) ? (void)0 : (void)({failures}++, __builtin_trap()))\n"
            f"{_assert_fail(cpp, failures)}"
            f"{_rename_c_main(test, test_main)}\n"
            f"int main(int argc, char **argv) {{\n"
            f"    int status = {call};\n"
            f"    fflush(stdout);\n    fflush(stderr);\n"
            f"    if (status != 0) return status;\n"
            f"    if ({failures} != 0) return 1;\n"
            f'    printf("\\n{MARK}%08x%08x\\n", {high:#x}u, {low:#x}u);\n'
            f"    fflush(stdout);\n"
            f"    _exit({proof.status});\n}}\n"
        )
        return Program(language="cpp" if cpp else "c", source=source, keep_build=False)

    return build


def _assert_fail(cpp: bool, failures: str) -> str:
    """A test that includes ``<assert.h>`` (or ``<cassert>``) gets glibc's ``assert``
    back, which calls ``__assert_fail``: a function the program could define. Ours is
    defined instead, counting and trapping like our ``assert``; a program defining one
    too does not compile."""
    # C++ must repeat glibc's exception specification (its __THROW); C may not
    linkage, throw = ('extern "C" ', " __THROW") if cpp else ("", "")
    return (
        f"{linkage}void __assert_fail(const char *what, const char *file, unsigned int line,\n"
        f"                            const char *function){throw} {{\n"
        f"    {failures}++;\n    (void)what; (void)file; (void)line; (void)function;\n"
        "    __builtin_trap();\n}\n"
    )


_C_RESET = (
    "NDEBUG", "assert", "main", "__builtin_trap", "_exit", "fflush", "printf", "stdout",
    "stderr", "exit", "int", "unsigned", "char", "void", "if", "return", "static",
    "volatile", "reinterpret_cast", "argc", "argv",
)  # fmt: skip
"""Macros the program may have defined that would change the code appended after it."""


# --- Java ------------------------------------------------------------------------------------

_JAVA_MAIN_CLASS = re.compile(r"\b(public\s+)?(final\s+)?class\s+Main\b")


def _java(setup: str, code: str, test: str, proof: Proof) -> Program:
    test_class = f"RefereeTest{proof.name}"
    renamed, count = _JAVA_MAIN_CLASS.subn(f"class {test_class}", test, count=1)
    if count == 0:
        raise ItemInvalid("invalid_reference", "reference.test: no `class Main` found")
    # The proof comes on stdin, read before the test loads any class of the program: no
    # constant in a class file (readable from disk) holds it, and locals are beyond
    # reflection. Output goes to the real descriptor, whatever System.out became.
    launcher = (
        "\nclass Main {\n"
        "    public static void main(java.lang.String[] args) throws java.lang.Throwable {\n"
        "        java.lang.String[] proof =\n"
        '            new java.lang.String(java.lang.System.in.readAllBytes()).trim().split(" ");\n'
        f"        {test_class}.main(args);\n"
        "        java.lang.System.out.flush();\n        java.lang.System.err.flush();\n"
        "        java.io.FileOutputStream out =\n"
        "            new java.io.FileOutputStream(java.io.FileDescriptor.out);\n"
        f'        out.write(("\\n{MARK}" + proof[1] + "\\n").getBytes());\n'
        "        out.flush();\n"
        "        java.lang.Runtime.getRuntime().halt(java.lang.Integer.parseInt(proof[0]));\n"
        "    }\n}\n"
    )
    return Program(
        language="java",
        source=f"{setup}\n{code}\n{renamed}\n{launcher}",
        fatal_assertions=True,
        keep_build=False,  # the renamed test carries this run's label
    )


# --- Go --------------------------------------------------------------------------------------

_GO_MAIN = re.compile(r"\bfunc\s+main\s*\(\s*\)")


def _go(setup: str, code: str, test: str, proof: Proof) -> Program:
    test_main = f"refereeTestMain{proof.name}"
    renamed, count = _GO_MAIN.subn(f"func {test_main}()", test, count=1)
    if count == 0:
        raise ItemInvalid("invalid_reference", "reference.test: no `func main()` found")
    # the nonce is written out at run time from an integer: no string in the binary holds it
    line = f"\\n{MARK}{'0' * 16}\\n"
    end = len(MARK) + 16
    launcher = (
        'package main\n\nimport "os"\n\n'
        f"func main() {{\n    {test_main}()\n    os.Stdout.Sync()\n"
        f'    line, n := []byte("{line}"), uint64({proof.nonce:#x})\n'
        f'    for i := 0; i < 16; i++ {{\n        line[{end} - i] = "0123456789abcdef"[n&15]\n'
        "        n >>= 4\n    }\n"
        f"    os.Stdout.Write(line)\n    os.Exit({proof.status})\n}}\n"
    )
    return Program(
        language="go",
        source=f"{setup}\n{code}\n{renamed}\n",
        files={"zz_referee.go": launcher},
        keep_build=False,
    )


# --- Rust ------------------------------------------------------------------------------------

_RUST_MAIN = re.compile(r"\bfn\s+main\s*\(\s*\)")
_RUST_MACROS = "\n".join(
    f"#[allow(unused_macros)]\nmacro_rules! {name} {{ ($($t:tt)*) => {{ std::{name}!($($t)*) }} }}"
    for name in ("assert", "assert_eq", "assert_ne", "debug_assert", "panic", "vec", "format")
)


_RUST_UNSAFE = re.compile(r"\bunsafe\b|#\s*\[\s*(?:no_mangle|export_name|link_section)\b")
_RUST_FORBID = "#![forbid(unsafe_code)]\n"


def _rust(setup: str, code: str, test: str, proof: Proof) -> Program:
    test_main = f"referee_test_main_{proof.name}"
    renamed, count = _RUST_MAIN.subn(f"fn {test_main}()", test, count=1)
    if count == 0:
        raise ItemInvalid("invalid_reference", "reference.test: no `fn main()` found")
    launcher = (
        f"fn main() {{\n    {test_main}();\n"
        "    use ::std::io::Write;\n    let mut out = ::std::io::stdout();\n"
        f'    let line = ::std::format!("\\n{MARK}{{:016x}}\\n", {proof.nonce:#x}u64);\n'
        "    let _ = out.flush();\n    let _ = out.write_all(line.as_bytes());\n"
        f"    let _ = out.flush();\n    ::std::process::exit({proof.status});\n}}\n"
    )
    # The compiler enforces what `refusal` screens the program for (unsafe blocks,
    # no_mangle...), unless the reference's own code needs unsafe: then the screen alone.
    forbid = "" if _RUST_UNSAFE.search(_strip_comments(setup + test)) else _RUST_FORBID
    source = f"{forbid}{setup}\n{code}\n{_RUST_MACROS}\n{renamed}\n{launcher}"
    return Program(language="rust", source=source, keep_build=False)


_LANGUAGES: dict[str, _Rules] = {
    "c": _Rules(_c_family(cpp=False), None),
    "cpp": _Rules(
        _c_family(cpp=True),
        re.compile(r"\boperator\s*(?:==|!=|<=>|<=|>=|<|>|bool\b|int\b|long\b|double\b)"),
    ),
    "java": _Rules(
        _java, re.compile(r"\b(?:boolean\s+equals|int\s+compareTo|int\s+hashCode)\s*\(")
    ),
    "go": _Rules(_go, None, re.compile(r'\bimport\s*(?:\([^)]*?)?(?:[\w.]+\s+)?"(?:unsafe|C)"')),
    "rust": _Rules(
        _rust,
        re.compile(r"\bimpl\b[^{;]*\b(?:PartialEq|PartialOrd|Eq|Ord|Deref)\b|\bmacro_rules!"),
        _RUST_UNSAFE,
    ),
}
