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

import bisect
import re
from dataclasses import dataclass
from importlib import resources

from referee.sandbox import Case, Program
from referee.verifiers.code import identifiers, native

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
_DIRECTIVE = re.compile(r"(?m)^[ \t]*(?:#|%:)(?:[^\n]*\\\n)*[^\n]*")
_WORD = re.compile(r"[A-Za-z_]\w*")
_TYPE_TEXT = re.compile(r"[\w\s<>,:&]*")
_SPECIFIERS = re.compile(r"^(?:(?:static|inline|constexpr|extern)\s+)*")
_BODY_AFTER = re.compile(r"\s*(?:(?:const|noexcept|override|final|try)\s*)*(?:->[^;{}]{0,256})?\{")
_ALIAS = (
    re.compile(r"\btypedef\s+([^;{}()]{1,256}?)\s+([A-Za-z_]\w*)\s*;"),
    re.compile(r"\busing\s+([A-Za-z_]\w*)\s*=\s*([^;{}()]{1,256}?)\s*;"),
)
_DEFINE_ALIAS = re.compile(r"(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n\\]+)$")
_USING = re.compile(r"\busing\s+namespace\s+std\s*;|\busing\s+std::\s*([A-Za-z_]\w*)\s*;")
_UNSUPPORTED = "unsupported_signature"
_NAMESPACE = "referee_program"
_PROBE = "referee_probe"
_MAX_ALIAS_DEPTH = 8
_MAX_TYPE_CHARS = 2048
_SCOPE = re.compile(r"\s*::\s*")
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


class Refused(ValueError):
    """A function the test uses cannot be called from the test's sandbox: ``flag`` says
    why (``unsupported_signature``, ``shadows_library``), the message which."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(message)
        self.flag = flag


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
    shadow = _shadow(code)
    used = set(_WORD.findall(_shadow(test))) - _defined(_shadow(setup + "\n" + test))
    aliases = _aliases(code, shadow)
    found: dict[Signature, None] = {}
    for definition in _definitions(shadow):
        if definition.name in used:
            found[_signature(definition, aliases)] = None
    return list(found)


def _signature(definition: _Definition, aliases: dict[str, str]) -> Signature:
    name = definition.name
    returns = _resolved(_SPECIFIERS.sub("", definition.returns.strip()), aliases)
    if returns is None or not _plain(returns, result=True):
        raise Refused(_UNSUPPORTED, f"{name}: its return type {definition.returns.strip()!r}")
    params = []
    for given in _params(definition.params, name):
        param = _resolved(given, aliases)
        if param is None or not _plain(param, result=False):
            raise Refused(_UNSUPPORTED, f"{name}: a parameter of type {given!r}")
        params.append(param)
    return Signature(name, returns, tuple(params))


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
    source = (
        f"{setup}\n{native.own_main_renamed(code)}\n"
        f"/* referee: the functions the test calls from its own sandbox */\n{pointers}"
        f'{native.undefined(code)}\n#include "{HEADER}"\n'
        f"int main() {{\n{_FLUSH_COUT}{table}"
        f"    return referee_boundary::serve(calls, {len(exported)});\n}}\n"
    )
    return Program(language="cpp", source=source, files=_header())


def tester(code: str, setup: str, test: str, exported: list[Signature]) -> Program:
    """The test's side: the program's standard includes, ``setup``, a stub for every
    ``exported`` function, then ``test`` with our ``assert`` and its ``main`` run by
    ``run_test``, which prints the verdict."""
    stubs = "".join(_stub(index, s) for index, s in enumerate(exported))
    names = "".join(f"using {_NAMESPACE}::{n};\n" for n in dict.fromkeys(s.name for s in exported))
    stubs = f"namespace {_NAMESPACE} {{\n{stubs}}}\n{names}"
    base = "".join(f"#include <{name}>\n" for name in _BASE_HEADERS)
    probe = _probe(exported)
    source = (
        f'{base}{_includes(code)}#include "{HEADER}"\n{_usings(code)}{setup}\n{stubs}'
        f"{_ASSERTS}{native.rename_main(test, TEST_MAIN)}\n{probe}"
        f"int main(int argc, char **argv) {{\n{_FLUSH_COUT}{_probed(exported)}"
        "    return referee_boundary::run_test(\n"
        f"        reinterpret_cast<int (*)(int, char **)>(&{TEST_MAIN}), argc, argv);\n}}\n"
    )
    return Program(language="cpp", source=source, files=_header())


_FLUSH_COUT = (
    "#ifdef _GLIBCXX_IOSTREAM\n"
    "    referee_boundary::flush_streams = [] { std::cout.flush(); };\n"
    "#endif\n"
)
"""Where the code before included ``<iostream>`` (libstdc++'s guard says so), its output
is flushed before a reply or a verdict; the boundary itself does not include it."""


def tester_case() -> Case:
    """The test is built into the tester: its case has no input."""
    return Case()


def _stub(index: int, signature: Signature) -> str:
    params = ", ".join(f"{t} a{i}" for i, t in enumerate(signature.params))
    args = "".join(f", a{i}" for i in range(len(signature.params)))
    types = "".join(f", {t}" for t in signature.params)
    return (
        f"{signature.returns} {signature.name}({params}) {{\n"
        f"    return referee_boundary::call<{signature.returns}{types}>(\n"
        f'        {index}u, "{signature.name}"{args});\n}}\n'
    )


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


def _shadow(code: str) -> str:
    """``code`` with comments, literals and preprocessor lines blanked."""
    return _DIRECTIVE.sub(identifiers.blank, native.C_LITERAL.sub(identifiers.blank, code))


def _defined(shadow: str) -> set[str]:
    """The functions ``shadow`` defines (a test's helpers, ``issame``)."""
    return {definition.name for definition in _definitions(shadow)}


@dataclass(frozen=True)
class _Definition:
    name: str
    returns: str
    """The text before the name, back to the previous ``;``, ``{`` or ``}``."""
    params: str


def _definitions(shadow: str) -> list[_Definition]:
    """Every function ``shadow`` defines at file scope: a name and a parenthesis at
    depth 0, a body after them. One pass (a response is untrusted text: no scan here
    may go back over it for every parenthesis)."""
    depths = identifiers.brace_depths(shadow)
    closes = _closing_parentheses(shadow)
    bounds = [i for i, char in enumerate(shadow) if char in ";{}"]
    found = []
    for call in _NAMED_PARENTHESIS.finditer(shadow):
        if depths[call.start()] != 0 or call.group(1) in _NOT_FUNCTIONS:
            continue
        close = closes.get(call.end() - 1, -1)
        if close < 0 or not _BODY_AFTER.match(shadow, close + 1):
            continue
        before = bisect.bisect_left(bounds, call.start())
        start = bounds[before - 1] + 1 if before else 0
        returns, params = shadow[start : call.start()], shadow[call.end() : close]
        found.append(_Definition(call.group(1), returns, params))
    return found


_NAMED_PARENTHESIS = re.compile(r"(?<!\w)([A-Za-z_]\w*)\s*\(")  # at a word's start only
_NOT_FUNCTIONS = frozenset({"if", "for", "while", "switch", "catch", "return", "sizeof"})


def _closing_parentheses(text: str) -> dict[int, int]:
    """Where each parenthesis of ``text`` that closes is closed, by where it opens."""
    closes: dict[int, int] = {}
    opened: list[int] = []
    for i, char in enumerate(text):
        if char == "(":
            opened.append(i)
        elif char == ")" and opened:
            closes[opened.pop()] = i
    return closes


def _params(text: str, name: str) -> list[str]:
    """The parameter types of a parameter list (their names dropped)."""
    parts, depth, last = [], 0, 0
    for i, char in enumerate(text):
        depth += (char in "<([") - (char in ">)]")
        if char == "," and depth == 0:
            parts.append(text[last:i])
            last = i + 1
    parts.append(text[last:])
    parts = [p.strip() for p in parts]
    if parts in ([""], ["void"]):
        return []
    types = []
    for part in parts:
        if "=" in part:
            raise Refused(_UNSUPPORTED, f"{name}: a parameter with a default value")
        types.append(_unnamed(part))
    return types


def _unnamed(param: str) -> str:
    """A parameter's type: its text without the name at its end, if it has one. The
    last word is a name unless it is all there is or it and the word before it make one
    builtin type (``long long``, ``unsigned int``, ``const char``)."""
    before, last = _last_word(param)
    if not last:
        return param
    before = before.rstrip()
    previous = _last_word(before)[1]
    if not before or (last in _COMBINING and previous in _COMBINING | {"const"}):
        return param
    return before


def _last_word(text: str) -> tuple[str, str]:
    """``text`` split before the word it ends with ("" if it ends otherwise)."""
    start = len(text)
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    word = text[start:]
    if not word or word[0].isdigit():
        return text, ""
    return text[:start], word


_COMBINING = frozenset(
    {"signed", "unsigned", "short", "int", "long", "char", "double", "float", "bool"}
)


def _plain(text: str, result: bool) -> bool:
    """Whether ``text`` is a type that crosses: `TYPE_WORDS` (and numbers, for
    ``array``), ``<>,:`` and, for a parameter, one ``&`` at its end; a result may be
    ``void``."""
    if result and text == "void":
        return True
    if not _TYPE_TEXT.fullmatch(text) or "::" in text.replace("std::", ""):
        return False
    if any(w not in TYPE_WORDS for w in _WORD.findall(text)):
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


def _aliases(code: str, shadow: str) -> dict[str, str]:
    """The program's type aliases at file scope (``typedef``, ``using``, ``#define``),
    by name. Whatever they stand for is checked like any type once read through."""
    depths = identifiers.brace_depths(shadow)
    found: dict[str, str] = {}
    for pattern, (target, name) in zip(_ALIAS, ((1, 2), (2, 1)), strict=True):
        for alias in pattern.finditer(shadow):
            if depths[alias.start()] == 0:
                found[alias.group(name)] = alias.group(target)
    for define in _DEFINE_ALIAS.finditer(native.C_LITERAL.sub(identifiers.blank, code)):
        found[define.group(1)] = define.group(2).strip()
    return found


def _resolved(text: str, aliases: dict[str, str]) -> str | None:
    """``text`` with the program's aliases read through (None: they never end)."""
    for _ in range(_MAX_ALIAS_DEPTH):
        if len(text) > _MAX_TYPE_CHARS:  # aliases of aliases grow a type geometrically
            return None
        if not set(_WORD.findall(text)) & aliases.keys() - TYPE_WORDS:
            return _SCOPE.sub("::", " ".join(text.split()))
        text = _WORD.sub(lambda w: _alias(w.group(), aliases), text)
    return None


def _alias(word: str, aliases: dict[str, str]) -> str:
    return word if word in TYPE_WORDS else aliases.get(word, word)


def _includes(code: str) -> str:
    """The standard headers the program includes (the test was written after them)."""
    names = dict.fromkeys(n.strip() for n in _INCLUDE.findall(code))
    return "".join(f"#include <{n}>\n" for n in names if n in _HEADERS)


def _usings(code: str) -> str:
    """The program's ``using namespace std`` and ``using std::`` of type names."""
    lines = []
    for found in _USING.finditer(_shadow(code)):
        name = found.group(1)
        if name is None:
            lines.append("using namespace std;\n")
        elif name in TYPE_WORDS:
            lines.append(f"using std::{name};\n")
    return "".join(dict.fromkeys(lines))
