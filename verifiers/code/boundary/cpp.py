"""The boundary between a C++ program and its assert test: two sandboxes, two binaries.

A test appended to the program and run in its process is within reach of the program:
a C++ function can read its caller's stack, the heap (GCC evaluates the arguments of
``issame(f(x), {1, 2})`` right to left, so the expected vector exists before ``f`` is
called) and the code after its return address, where the expected values are
immediates. So the program is built alone, with a ``main`` of ours that serves calls
(`boundary.hpp`'s ``serve``), and the test is built alone too, where every function it
takes from the program is a stub of ours that sends its arguments to the program's
sandbox and returns what comes back (``call``). The test's binary never holds the
program's code, the program's never the test's.

A stub needs the function's signature. It is read from the program's definition, and
only types made of the standard library's value types (numbers, ``bool``, ``char``,
``string``, the containers, ``optional``, ``pair``, ``tuple``, ``variant``; see
`TYPE_WORDS`) are taken: the words are checked one by one, so no text of the program
but those type names reaches the test's side. ``typedef``, ``using`` and ``#define``
aliases of such types are read through. A function the test uses whose signature
holds anything else (a pointer, a type of the program's, a template, ``std::any``) is
`Refused`: the program scores 0 (flag ``unsupported_signature``); it is never run with
the test in its process.

A stub must not stand in for a library function the test calls: a program's ``int
max(int, int)`` would win over ``std::max`` in the test's own ``max(a, b)``. So the
test's side asks the compiler, after the test and all its includes, whether the
standard library has a function of that name callable with the stub's parameter types
(`_PROBE`); if so, the test does not run and the program scores 0 (flag
``shadows_library``). The stubs live in a namespace of their own, brought to the test
by using-declarations, so one with the name and parameters of a C library function in
the global namespace (``fabs``) does not compile either: it would otherwise be that
function's definition, for the whole test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from referee.sandbox import Program
from referee.verifiers.code import native
from referee.verifiers.code.boundary import declarations
from referee.verifiers.code.boundary.declarations import ZEROED, Refused
from referee.verifiers.code.boundary.sides import SetupPlace, Sides, lines_after

HEADER = "referee_boundary.hpp"
TEST_MAIN = "referee_test_main"

TYPE_WORDS = frozenset(
    {
        "std", "const", "signed", "unsigned", "short", "int", "long", "char", "bool",
        "float", "double", "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
        "uint16_t", "uint32_t", "uint64_t", "string", "vector", "deque", "list", "array",
        "set", "multiset", "unordered_set", "unordered_multiset", "map", "multimap",
        "unordered_map", "unordered_multimap", "optional", "pair", "tuple", "variant",
    }
)  # fmt: skip
"""The words a signature's types may hold (`boundary.hpp` carries exactly these)."""

_HEADERS = frozenset(
    {
        "algorithm", "any", "array", "atomic", "bitset", "cassert", "cctype", "cerrno",
        "cfloat", "charconv", "chrono", "cinttypes", "climits", "clocale", "cmath",
        "complex", "cstdarg", "cstddef", "cstdint", "cstdio", "cstdlib", "cstring", "ctime",
        "cwchar", "cwctype", "deque", "exception", "forward_list", "fstream", "functional",
        "initializer_list", "iomanip", "ios", "iosfwd", "iostream", "istream", "iterator",
        "limits", "list", "locale", "map", "memory", "new", "numeric", "optional", "ostream",
        "queue", "random", "ratio", "regex", "set", "sstream", "stack", "stdexcept",
        "string", "string_view", "system_error", "tuple", "type_traits", "typeinfo",
        "unordered_map", "unordered_set", "utility", "valarray", "variant", "vector",
        "bits/stdc++.h", "assert.h", "ctype.h", "errno.h", "float.h", "inttypes.h",
        "limits.h", "math.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h",
        "string.h", "time.h", "wchar.h", "wctype.h",
    }
)  # fmt: skip
"""The standard headers a program's includes bring to the test's side (the test was
written after them); no other header of the system, which could define a macro the
test would compare through."""
_INCLUDE = re.compile(r"(?m)^[ \t]*#[ \t]*include[ \t]*<([^>\n]+)>")
_TYPE_TEXT = re.compile(r"[\w\s<>,:&]*")
_USING = re.compile(r"\busing\s+namespace\s+std\s*;|\busing\s+std::\s*([A-Za-z_]\w*)\s*;")
_UNSUPPORTED = declarations.UNSUPPORTED
_NAMESPACE = "referee_program"
_PROBE = "referee_probe"
_BASE_HEADERS = (
    "cmath",
    "cstdlib",
    "cstring",
    "cctype",
    "algorithm",
    "numeric",
    "climits",
    "cassert",
)
"""What the test's side includes besides the program's headers and `boundary.hpp`."""


@dataclass(frozen=True)
class Signature:
    """One function the program defines and the test uses: its name, the return type
    and the parameter types, as text made of `TYPE_WORDS` only."""

    name: str
    returns: str
    params: tuple[str, ...]

    def pointer(self) -> str:
        """The type of a pointer to the function."""
        return f"{self.returns} (*)({', '.join(self.params)})"


def signatures(code: str, test: str, setup: str = "") -> list[Signature]:
    """The definitions in ``code`` at file scope of the functions ``test`` names and
    neither it nor ``setup`` defines, in source order (overloads each once). Raises
    `Refused` for one whose types cannot cross (one that would stand in for a library
    function is found by the test's side, `_probed`)."""
    found, aliases = declarations.used(code, test, setup)
    return list(dict.fromkeys(_signature(definition, aliases) for definition in found))


def _signature(definition: declarations.Definition, aliases: dict[str, str]) -> Signature:
    name = definition.name
    given = declarations.SPECIFIERS.sub("", definition.returns.strip())
    returns = declarations.resolved(given, aliases, TYPE_WORDS)
    if returns is None or not _plain(returns, result=True):
        raise Refused(_UNSUPPORTED, f"{name}: its return type {definition.returns.strip()!r}")
    params = []
    for given in declarations.params(definition.params, name):
        param = declarations.resolved(given, aliases, TYPE_WORDS)
        if param is None or not _plain(param, result=False):
            raise Refused(_UNSUPPORTED, f"{name}: a parameter of type {given!r}")
        params.append(param)
    return Signature(name, returns, tuple(params))


def programs(code: str, test: str, setup: str) -> Sides:
    """The program's side and the test's (`program`, `tester`). Raises `Refused`."""
    exported = signatures(code, test, setup)
    place = SetupPlace(lines_after("", setup)) if setup.strip() else None
    return Sides(program(code, setup, exported), *tester(code, setup, test, exported), place)


def program(code: str, setup: str, exported: list[Signature]) -> Program:
    """The program's side: ``setup``, ``code`` (its own ``main`` renamed), a pointer to
    each ``exported`` function taken while the program's macros hold (its ``#define int
    long long`` is in its signatures), then, with those macros undone, `boundary.hpp`
    and a ``main`` serving the functions."""
    pointers = "".join(
        f"static auto referee_function_{i} = static_cast<{s.pointer()}>(&{s.name});\n"
        for i, s in enumerate(exported)
    )
    calls = "".join(
        "        [](referee_boundary::Reader &in, referee_boundary::Writer &out) {\n"
        f"            referee_boundary::serve_call(referee_function_{i}, in, out);\n"
        "        },\n"
        for i in range(len(exported))
    )
    table = f"    static const referee_boundary::Call calls[] = {{\n{calls}    }};\n"
    if not exported:
        table = "    static const referee_boundary::Call *calls = nullptr;\n"
    # A line comment of ours: a block comment the setup left open runs on to the end,
    # where the compiler says where it began (`diagnostics.setup_parse_error`).
    source = (
        f"{setup}\n{native.own_main_renamed(code)}\n"
        "// referee: the functions the test calls from its own sandbox\n"
        f"{pointers}"
        f'{native.undefined(code)}\n#include "{HEADER}"\n'
        f"int main() {{\n{_FLUSH_COUT}{table}"
        f"    return referee_boundary::serve(calls, {len(exported)});\n}}\n"
    )
    return Program(language="cpp", source=source, files=_header())


def tester(code: str, setup: str, test: str, exported: list[Signature]) -> tuple[Program, range]:
    """The test's side (and the lines of its source that hold the test): the program's
    standard includes, ``setup``, a stub for every ``exported`` function, then ``test``
    with our ``assert`` and its ``main`` run by ``run_test``, which prints the verdict."""
    stubs = "".join(_stub(index, s) for index, s in enumerate(exported))
    # A function the test declares itself (``int add(int a, int b);``) would be ambiguous
    # beside a using-declaration: its declaration is defined after the test instead.
    own = {d.name for d in declarations.prototypes(declarations.shadow(test))}
    names = dict.fromkeys(s.name for s in exported if s.name not in own)
    usings = "".join(f"using {_NAMESPACE}::{n};\n" for n in names)
    stubs = f"namespace {_NAMESPACE} {{\n{stubs}}}\n{usings}"
    forwards = "".join(_forward(s) for s in exported if s.name in own)
    base = "".join(f"#include <{name}>\n" for name in _BASE_HEADERS)
    probe = _probe(exported)
    header = f'#include "{HEADER}"\n'
    before = f"{base}{_includes(code)}{header}{_usings(code)}{setup}\n{stubs}{_ASSERTS}"
    renamed = native.rename_main(test, TEST_MAIN)
    source = (
        f"{before}{renamed}\n{forwards}{probe}"
        f"int main(int argc, char **argv) {{\n    referee_boundary::start();\n"
        f"{_FLUSH_COUT}{_probed(exported)}"
        "    return referee_boundary::run_test(\n"
        f"        reinterpret_cast<int (*)(int, char **)>(&{TEST_MAIN}), argc, argv);\n}}\n"
    )
    built = Program(language="cpp", source=source, files=_header(), build_flags=[ZEROED])
    return built, lines_after(before, renamed)


_FLUSH_COUT = (
    "#ifdef _GLIBCXX_IOSTREAM\n"
    "    referee_boundary::flush_streams = [] { std::cout.flush(); };\n"
    "#endif\n"
)
"""Where the code before included ``<iostream>`` (libstdc++'s guard says so), its output
is flushed before a reply or a verdict; the boundary itself does not include it."""


def _stub(index: int, signature: Signature) -> str:
    params = ", ".join(f"{t} a{i}" for i, t in enumerate(signature.params))
    args = "".join(f", a{i}" for i in range(len(signature.params)))
    types = "".join(f", {t}" for t in signature.params)
    return (
        f"{signature.returns} {signature.name}({params}) {{\n"
        f"    return referee_boundary::call<{signature.returns}{types}>(\n"
        f'        {index}u, "{signature.name}"{args});\n}}\n'
    )


def _forward(signature: Signature) -> str:
    """A file-scope definition of the test's own declaration of a function: its stub."""
    params = ", ".join(f"{t} a{i}" for i, t in enumerate(signature.params))
    args = ", ".join(f"a{i}" for i in range(len(signature.params)))
    name = signature.name
    return f"{signature.returns} {name}({params}) {{ return {_NAMESPACE}::{name}({args}); }}\n"


def _probe(exported: list[Signature]) -> str:
    """The namespace `_probed` looks names up in: ``std``'s, else a fallback of ours
    (qualified lookup there sees those two, never the global stubs)."""
    fallbacks = "".join(f"absent {n}(...);\n" for n in dict.fromkeys(s.name for s in exported))
    return (
        f"namespace {_PROBE} {{\nnamespace fallback {{\nstruct absent {{}};\n{fallbacks}}}\n"
        "namespace look {\nusing namespace std;\nusing namespace fallback;\n}\n}\n"
    )


def _probed(exported: list[Signature]) -> str:
    """Statements ending the test, flagged ``shadows_library``, when ``std`` has a
    function of an exported name callable with that signature's parameter types."""
    checks = []
    for s in exported:
        args = ", ".join(f"std::declval<{t}>()" for t in s.params)
        call = f"{_PROBE}::look::{s.name}({args})"
        checks.append(
            f"    if (!std::is_same_v<decltype({call}), {_PROBE}::fallback::absent>)\n"
            f'        referee_boundary::shadows_library("{s.name}");\n'
        )
    return "".join(checks)


_ASSERTS = (
    "#undef assert\n"
    "#define assert(c) ((c) ? (void)0 : referee_boundary::assertion_failed(#c))\n"
    'extern "C" void __assert_fail(const char *what, const char *, unsigned int,\n'
    "                              const char *) __THROW {\n"
    "    referee_boundary::assertion_failed(what);\n}\n"
)
"""The test's ``assert`` (and glibc's, for a test that includes ``<assert.h>`` again)
prints the failing verdict."""


def _header() -> dict[str, str]:
    return {HEADER: (resources.files(__package__) / "boundary.hpp").read_text(encoding="utf-8")}


def _plain(text: str, result: bool) -> bool:
    """Whether ``text`` is a type that crosses: `TYPE_WORDS` (and numbers, for
    ``array``), ``<>,:`` and, for a parameter, one ``&`` at its end; a result may be
    ``void``."""
    if result and text == "void":
        return True
    if not _TYPE_TEXT.fullmatch(text) or "::" in text.replace("std::", ""):
        return False
    if any(w not in TYPE_WORDS for w in declarations.WORD.findall(text)):
        return False
    body = text.rstrip()
    if body.endswith("&") and not result:
        body = body[:-1]
    if "&" in body or not body or ":" in body.replace("::", ""):
        return False
    depth = 0
    for char in body:
        depth += (char == "<") - (char == ">")
        if depth < 0:
            return False
    return depth == 0


def _includes(code: str) -> str:
    """The standard headers the program includes (the test was written after them)."""
    names = dict.fromkeys(n.strip() for n in _INCLUDE.findall(code))
    return "".join(f"#include <{n}>\n" for n in names if n in _HEADERS)


def _usings(code: str) -> str:
    """The program's ``using namespace std`` and ``using std::`` of type names."""
    lines = []
    for found in _USING.finditer(declarations.shadow(code)):
        name = found.group(1)
        if name is None:
            lines.append("using namespace std;\n")
        elif name in TYPE_WORDS:
            lines.append(f"using std::{name};\n")
    return "".join(dict.fromkeys(lines))
