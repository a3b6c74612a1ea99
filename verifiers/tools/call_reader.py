"""A quick reader for the common shape of Python call syntax: ``f(a=1)`` or
``[f(a=1), pkg.g(b="x")]`` with literal keyword values.

`read_calls` either returns exactly what parsing with ``ast`` and reading each value with
``ast.literal_eval`` gives, or None: it declines anything outside its small grammar
(escapes and prefixes in strings, numbers with ``_``, ``j`` or a leading zero, comments,
several top-level lines, positional arguments, names that are not ``True``/``False``/
``None``...), and the caller then takes the ``ast`` path, which decides. Being a regular
tokenizer and a recursive descent over a few token kinds, it costs about a third of
``ast.parse`` on a typical call list, which is most of a ``tool_call`` item's cost.
"""

from __future__ import annotations

import keyword
import re
from typing import Any

# Whitespace Python's tokenizer skips inside brackets, then one token: a name, a number, a
# plain one-line string, or any other single character (an operator, or something the
# grammar declines). Every non-space character is covered, so findall skips nothing.
_TOKENS = re.compile(
    r"""[ \t\n]*(
        [A-Za-z_][A-Za-z0-9_]*
      | (?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?
      | '[^'\\\n\r\x00\ud800-\udfff]*' | "[^"\\\n\r\x00\ud800-\udfff]*"
      | [^ \t\n]
    )""",
    re.VERBOSE,
)
_CONSTANTS: dict[str, Any] = {"True": True, "False": False, "None": None}
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_DIGITS = frozenset("0123456789.")
_QUOTES = frozenset("'\"")
_MAX_DEPTH = 64


class _Declined(Exception):
    """Outside the reader's grammar: the ``ast`` path decides."""


def _name(token: str) -> str:
    """An ASCII identifier that is not a keyword (Python would NFKC-normalise others)."""
    if token[0] not in _NAME_START or keyword.iskeyword(token):
        raise _Declined
    return token


Read = list[tuple[str, dict[str, Any]]]
"""Calls as (dotted function name, keyword arguments)."""


def read_calls(text: str) -> Read | None:
    """The calls of ``text`` (one call, or a list of calls), or None when declined."""
    reader = _Reader(_TOKENS.findall(text))
    try:
        calls = reader.calls()
    except (_Declined, IndexError, ValueError, TypeError):
        return None
    return calls


class _Reader:
    """A recursive descent over the tokens; any surprise raises (see `read_calls`). The
    call and its scalar arguments are read inline: this loop is the hot path."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.at = 0

    def take(self) -> str:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def expect(self, token: str) -> None:
        if self.take() != token:
            raise _Declined

    def calls(self) -> Read:
        if self.tokens[0] == "[":
            self.at = 1
            calls = self.sequence("]", self.call)
        else:
            calls = [self.call()]
        if self.at != len(self.tokens) or not calls:
            raise _Declined
        return calls

    def sequence(self, close: str, element: Any) -> list[Any]:
        """Elements up to ``close`` (taken), comma separated, a trailing comma allowed."""
        found = []
        while self.tokens[self.at] != close:
            found.append(element())
            if self.tokens[self.at] != close:
                self.expect(",")
        self.at += 1
        return found

    def call(self) -> tuple[str, dict[str, Any]]:
        tokens, at = self.tokens, self.at
        name = _name(tokens[at])
        at += 1
        while tokens[at] == ".":
            name += "." + _name(tokens[at + 1])
            at += 2
        if tokens[at] != "(":
            raise _Declined
        at += 1
        arguments: dict[str, Any] = {}
        while tokens[at] != ")":
            key = _name(tokens[at])
            if key in arguments or tokens[at + 1] != "=":
                raise _Declined  # Python refuses a repeated keyword
            token = tokens[at + 2]
            first = token[0]
            if first in _QUOTES:
                arguments[key] = token[1:-1]
                at += 3
            elif first in _DIGITS:
                arguments[key] = self.number(token)
                at += 3
            else:
                self.at = at + 2
                arguments[key] = self.value(0)
                at = self.at
            if tokens[at] != ")":
                if tokens[at] != ",":
                    raise _Declined
                at += 1
        self.at = at + 1
        return name, arguments

    def value(self, depth: int) -> Any:
        if depth > _MAX_DEPTH:
            raise _Declined
        token = self.take()
        first = token[0]
        if first in _QUOTES:
            return token[1:-1]
        if first in "+-":
            number = self.number(self.take())
            return -number if first == "-" else +number
        if first in _DIGITS:
            return self.number(token)
        if token in _CONSTANTS:
            return _CONSTANTS[token]
        if token == "[":
            return self.sequence("]", lambda: self.value(depth + 1))
        if token == "(":
            return self.parenthesized(depth + 1)
        if token == "{":
            return self.braced(depth + 1)
        raise _Declined

    def number(self, token: str) -> int | float:
        if token[0] not in _DIGITS or token == ".":
            raise _Declined
        if "." in token or "e" in token or "E" in token:
            return float(token)
        if len(token) > 1 and token[0] == "0":
            raise _Declined  # 0123 is a syntax error; 00 is not: let ast say
        return int(token)

    def parenthesized(self, depth: int) -> Any:
        if self.tokens[self.at] == ")":
            self.at += 1
            return ()
        first = self.value(depth)
        if self.take() == ")":
            return first  # (x) is x
        self.at -= 1
        self.expect(",")
        return (first, *self.sequence(")", lambda: self.value(depth)))

    def braced(self, depth: int) -> dict[Any, Any] | set[Any]:
        if self.tokens[self.at] == "}":
            self.at += 1
            return {}
        first = self.value(depth)
        if self.tokens[self.at] != ":":
            rest = [first]
            if self.take() != "}":
                self.at -= 1
                self.expect(",")
                rest += self.sequence("}", lambda: self.value(depth))
            return set(rest)  # unhashable elements raise TypeError: declined
        self.at += 1
        pairs = [(first, self.value(depth))]
        if self.take() != "}":
            self.at -= 1
            self.expect(",")
            pairs += self.sequence("}", lambda: self.pair(depth))
        return dict(pairs)

    def pair(self, depth: int) -> tuple[Any, Any]:
        key = self.value(depth)
        self.expect(":")
        return key, self.value(depth)
