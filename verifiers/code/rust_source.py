"""What a Rust program declares at its top level, read for the functions its test takes
from it (`verifiers.code.boundary.rust`), with comments and literals blanked out
(`masked`): items (``struct``, ``enum``, ``union``, ``trait``, ``type``, ``fn``,
``const``, ``static``, ``mod``).
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
"""Names the test takes from Rust's prelude (and its primitive types): never the
program's."""

_LITERAL = re.compile(
    r'r(?P<hashes>#*)".*?"(?P=hashes)'  # raw string
    r'|b?"(?:[^"\\]|\\.)*"'  # string (may span lines)
    r"|b?'(?:[^'\\\n]|\\.)'"  # character (a lifetime 'a stays)
    r"|//[^\n]*|/\*",  # a block comment: nested ones end where Rust ends them (`_closed`)
    re.S,
)
_COMMENT_EDGE = re.compile(r"/\*|\*/")
_ITEM = re.compile(r"\b(?:struct|enum|union|trait|type|fn|const|static|mod)\s+([A-Za-z_]\w*)")


def masked(code: str) -> str:
    """``code`` with comments and literals blanked (newlines kept). Block comments nest
    in Rust: ``/* /* */ fn f() */`` is one comment, ``fn f`` no item of the program's
    (nor, copied out, an unclosed comment in the test's build)."""
    parts, at = [], 0
    while (found := _LITERAL.search(code, at)) is not None:
        end = _closed(code, found.end()) if found.group() == "/*" else found.end()
        parts += [code[at : found.start()], identifiers.blanked(code[found.start() : end])]
        at = end
    return "".join([*parts, code[at:]])


def _closed(code: str, at: int) -> int:
    """Where the block comment whose ``/*`` ends at ``at`` ends (the end of ``code`` if
    it never does)."""
    depth = 1
    for edge in _COMMENT_EDGE.finditer(code, at):
        depth += 1 if edge.group() == "/*" else -1
        if depth == 0:
            return edge.end()
    return len(code)


def item_names(code: str) -> list[str]:
    """The items ``code`` declares at its top level (``fn``, ``const``, ``static``,
    types, ``mod``), each once: what a program in the same crate can name (an item in
    a ``mod`` is reached by a path, one in a function not at all)."""
    text = masked(code)
    depth = identifiers.brace_depths(text)
    found = [m.group(1) for m in _ITEM.finditer(text) if depth[m.start()] == 0]
    return list(dict.fromkeys(found))
