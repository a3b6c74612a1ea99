"""What a Rust program names in its crate, read for the in-process test appended to it
(`verifiers.code.inprocess`): the test shares the crate, and an item of the crate shadows
the prelude, so a program's own ``struct String`` whose ``from`` ignored its argument,
with a derived equality, was the ``String`` the test built its expected values with.

Read with comments and literals blanked out (`masked`): items (``struct``, ``enum``,
``union``, ``trait``, ``type``, ``fn``, ``const``, ``static``, ``mod``), names brought in
by ``use`` (``as`` names, and last path segments of the crate's own paths) and enum
variants (a glob ``use`` of an enum brings them in). Any depth counts: a nested one is a
rare and harmless refusal.
"""

from __future__ import annotations

import re

from referee.verifiers.code import identifiers

PRELUDE = frozenset((
    "Copy", "Send", "Sized", "Sync", "Unpin", "Drop", "Fn", "FnMut", "FnOnce", "drop",
    "Box", "ToOwned", "Clone", "PartialEq", "PartialOrd", "Eq", "Ord", "AsRef", "AsMut",
    "Into", "From", "Default", "Iterator", "Extend", "IntoIterator", "DoubleEndedIterator",
    "ExactSizeIterator", "Option", "Some", "None", "Result", "Ok", "Err", "String",
    "ToString", "Vec", "TryFrom", "TryInto", "FromIterator", "bool", "char", "str", "i8",
    "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize", "f32",
    "f64",
))  # fmt: skip
"""Names the test takes from Rust's prelude (and its primitive types)."""

_LITERAL = re.compile(
    r'r(?P<hashes>#*)".*?"(?P=hashes)'  # raw string
    r'|b?"(?:[^"\\]|\\.)*"'  # string (may span lines)
    r"|b?'(?:[^'\\\n]|\\.)'"  # character (a lifetime 'a stays)
    r"|//[^\n]*|/\*.*?(?:\*/|\Z)",
    re.S,
)
_ITEM = re.compile(r"\b(?:struct|enum|union|trait|type|fn|const|static|mod)\s+([A-Za-z_]\w*)")
_USE = re.compile(r"\buse\s+([^;]*);")
_USED_NAME = re.compile(r"(?:\bas\s+|::|^|[{,]\s*)([A-Za-z_]\w*)\s*(?=[,};]|$)")
_RENAMED = re.compile(r"\bas\s+([A-Za-z_]\w*)")
_STANDARD = re.compile(r"\s*(?:::)?\s*(?:std|core|alloc)\s*::")
_ENUM = re.compile(r"\benum\s+[A-Za-z_]\w*[^{;]*\{")
_VARIANT = re.compile(r"(?:^|,)\s*(?:#\[[^\]]*\]\s*)*([A-Za-z_]\w*)")
_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")


def masked(code: str) -> str:
    """``code`` with comments and literals blanked (newlines kept)."""
    return _LITERAL.sub(identifiers.blank, code)


def shadowing(code: str, test: str) -> list[str]:
    """The prelude names the program declares or brings in and the test uses."""
    used = set(_IDENTIFIER.findall(masked(test)))
    return [name for name in crate_names(code) if name in PRELUDE and name in used]


def item_names(code: str) -> list[str]:
    """The items ``code`` declares at its top level (``fn``, ``const``, ``static``,
    types, ``mod``), each once: what a program in the same crate can name (an item in
    a ``mod`` is reached by a path, one in a function not at all)."""
    text = masked(code)
    depth = identifiers.brace_depths(text)
    found = [m.group(1) for m in _ITEM.finditer(text) if depth[m.start()] == 0]
    return list(dict.fromkeys(found))


def crate_names(code: str) -> list[str]:
    """The names ``code`` declares (items, enum variants) or brings in with ``use``."""
    text = masked(code)
    names = _ITEM.findall(text)
    for found in _USE.finditer(text):
        path = found.group(1).replace("\n", " ")
        # the standard library's own items are what the prelude names (a String is the
        # String); only a renaming can make one stand for another
        names += _RENAMED.findall(path) if _STANDARD.match(path) else _USED_NAME.findall(path)
    read = 0  # the end of the last enum read: one inside it is not another
    for found in _ENUM.finditer(text):
        if found.start() >= read:
            body, read = _top_level(text, found.end())
            names += _VARIANT.findall(body)
    return list(dict.fromkeys(names))


def _top_level(text: str, at: int) -> tuple[str, int]:
    """The text of the braces opened just before ``at``, its nested groups blanked, and
    where they close."""
    depth, kept, end = 1, [], len(text)
    for index in range(at, len(text)):
        char = text[index]
        if char in "{([":
            depth += 1
        elif char in "})]":
            depth -= 1
            if depth == 0:
                end = index
                break
        kept.append(char if depth == 1 and char not in "})]" else " ")
    return "".join(kept), end
