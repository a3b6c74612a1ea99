"""Reading the functions a C or C++ program defines, for the stubs of a split test.

A test that runs in a sandbox of its own calls each function it takes from the program
through a stub with the function's signature (`boundary.cpp`, `boundary.c`). The
signature is read here from the program's definition at file scope: its name, the text
before it (the return type) and its parameters' types, with the program's type aliases
(``typedef``, ``using``, ``#define``) read through. What a type may be made of is the
language's business; this module only finds the text.

The program is untrusted text: every scan is one pass, and aliases are read through a
bounded number of times into a bounded length (an alias bomb is refused, not expanded).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from referee.verifiers.code import identifiers, native

UNSUPPORTED = "unsupported_signature"
ZEROED = "-ftrivial-auto-var-init=zero"
"""The test's side is built with its automatic variables zeroed: an argument goes with
what the test's object holds, and an out-parameter the test left uninitialised held
its old stack (an earlier helper's expected values), which the program could read."""
"""The flag of a function whose types cannot cross."""

_DIRECTIVE = re.compile(r"(?m)^[ \t]*(?:#|%:)(?:[^\n]*\\\n)*[^\n]*")
WORD = re.compile(r"[A-Za-z_]\w*")
SPECIFIERS = re.compile(r"^(?:(?:static|inline|constexpr|extern)\s+)*")
"""Storage and inline specifiers before a return type, which the stub does not repeat."""
_BODY_AFTER = re.compile(r"\s*(?:(?:const|noexcept|override|final|try)\s*)*(?:->[^;{}]{0,256})?\{")
_ALIAS = (
    re.compile(r"\btypedef\s+([^;{}()]{1,256}?)\s+([A-Za-z_]\w*)\s*;"),
    re.compile(r"\busing\s+([A-Za-z_]\w*)\s*=\s*([^;{}()]{1,256}?)\s*;"),
)
_DEFINE_ALIAS = re.compile(r"(?m)^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n\\]+)$")
_MAX_ALIAS_DEPTH = 8
_MAX_TYPE_CHARS = 2048
_SCOPE = re.compile(r"\s*::\s*")


class Refused(ValueError):
    """A function the test uses cannot be called from the test's sandbox: ``flag`` says
    why (``unsupported_signature``, ``shadows_library``), the message which."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(message)
        self.flag = flag


@dataclass(frozen=True)
class Definition:
    """A function defined at file scope: its name, the text before the name back to the
    previous ``;``, ``{`` or ``}`` (the return type and specifiers), and the text
    between its parentheses."""

    name: str
    returns: str
    params: str


def used(code: str, test: str, setup: str = "") -> tuple[list[Definition], dict[str, str]]:
    """The definitions in ``code`` at file scope of the functions ``test`` names and
    neither it nor ``setup`` defines, in source order, and ``code``'s type aliases."""
    hidden = shadow(code)
    names = set(WORD.findall(shadow(test))) - defined(shadow(setup + "\n" + test))
    found = [d for d in definitions(hidden) if d.name in names]
    return found, aliases(code, hidden)


def shadow(code: str) -> str:
    """``code`` with comments, literals and preprocessor lines blanked."""
    return _DIRECTIVE.sub(identifiers.blank, native.C_LITERAL.sub(identifiers.blank, code))


def defined(hidden: str) -> set[str]:
    """The functions ``hidden`` (a `shadow`) defines (a test's helpers, ``issame``)."""
    return {definition.name for definition in definitions(hidden)}


def definitions(hidden: str) -> list[Definition]:
    """Every function ``hidden`` (a `shadow`) defines at file scope: a name and a
    parenthesis at depth 0, a body after them. One pass (a response is untrusted text: no
    scan here may go back over it for every parenthesis)."""
    return _file_scope(hidden, _BODY_AFTER)


def prototypes(hidden: str) -> list[Definition]:
    """Every function ``hidden`` (a `shadow`) declares at file scope without a body
    (``int add(int a, int b);``): a type, a name and a parenthesis at depth 0, then
    ``;`` (``int r = add(1, 2);`` is a variable)."""
    found = _file_scope(hidden, _DECLARATION_END)
    return [d for d in found if d.returns.strip() and "=" not in d.returns]


_DECLARATION_END = re.compile(r"\s*(?:(?:const|noexcept|throw\s*\(\s*\))\s*)*;")


def _file_scope(hidden: str, after: re.Pattern[str]) -> list[Definition]:
    """The functions at file scope of ``hidden`` whose closing parenthesis ``after``
    follows."""
    depths = identifiers.brace_depths(hidden)
    closes = _closing_parentheses(hidden)
    bounds = [i for i, char in enumerate(hidden) if char in ";{}"]
    found = []
    for call in _NAMED_PARENTHESIS.finditer(hidden):
        if depths[call.start()] != 0 or call.group(1) in _NOT_FUNCTIONS:
            continue
        close = closes.get(call.end() - 1, -1)
        if close < 0 or not after.match(hidden, close + 1):
            continue
        before = bisect.bisect_left(bounds, call.start())
        start = bounds[before - 1] + 1 if before else 0
        returns, params = hidden[start : call.start()], hidden[call.end() : close]
        found.append(Definition(call.group(1), returns, params))
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


def params(text: str, name: str) -> list[str]:
    """The parameter types of a parameter list (their names dropped). Raises `Refused`
    for a default value (the stub would need the program's expression)."""
    types = []
    for part in _parameters(text):
        if "=" in part:
            raise Refused(UNSUPPORTED, f"{name}: a parameter with a default value")
        types.append(_unnamed(part))
    return types


def param_names(text: str) -> list[str]:
    """The names a parameter list declares, in order ("" for a parameter without one)."""
    names = []
    for part in _parameters(text):
        kept = _unnamed(part.split("=")[0].strip())
        names.append(part.split("=")[0].strip()[len(kept) :].strip())
    return names


def _parameters(text: str) -> list[str]:
    """A parameter list's parameters, each stripped (none for ``()`` and ``(void)``)."""
    parts, depth, last = [], 0, 0
    for i, char in enumerate(text):
        depth += (char in "<([") - (char in ">)]")
        if char == "," and depth == 0:
            parts.append(text[last:i])
            last = i + 1
    parts.append(text[last:])
    parts = [p.strip() for p in parts]
    return [] if parts in ([""], ["void"]) else parts


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
    {"signed", "unsigned", "short", "int", "long", "char", "double", "float", "bool", "_Bool"}
)


def aliases(code: str, hidden: str) -> dict[str, str]:
    """The program's type aliases at file scope (``typedef``, ``using``, ``#define``),
    by name. Whatever they stand for is checked like any type once read through."""
    depths = identifiers.brace_depths(hidden)
    found: dict[str, str] = {}
    for pattern, (target, name) in zip(_ALIAS, ((1, 2), (2, 1)), strict=True):
        for alias in pattern.finditer(hidden):
            if depths[alias.start()] == 0:
                found[alias.group(name)] = alias.group(target)
    for define in _DEFINE_ALIAS.finditer(native.C_LITERAL.sub(identifiers.blank, code)):
        found[define.group(1)] = define.group(2).strip()
    return found


def resolved(text: str, aliases: dict[str, str], keep: frozenset[str]) -> str | None:
    """``text`` with the program's aliases read through, words in ``keep`` (the
    language's own type words) left as they are; None when the aliases never end or
    grow past a bounded length."""
    for _ in range(_MAX_ALIAS_DEPTH):
        if len(text) > _MAX_TYPE_CHARS:  # aliases of aliases grow a type geometrically
            return None
        if not set(WORD.findall(text)) & aliases.keys() - keep:
            return _SCOPE.sub("::", " ".join(text.split()))
        text = WORD.sub(
            lambda w: w.group() if w.group() in keep else aliases.get(w.group(), w.group()), text
        )
    return None
