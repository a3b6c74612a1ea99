"""The boundary between a Rust program and its assert test: two sandboxes, two binaries.

As for C, C++ and Go: a test appended to the program shares its process, and no screen
of the source keeps a Rust program out of it. ``#![forbid(unsafe_code)]`` held, and a
program in safe Rust still read the test's expected string out of the binary's
read-only data: a lifetime the compiler wrongly accepts (rust-lang/rust#25860) let a
reference outlive its referent and read one type as another, an address as a slice
(``safe_transmute.rs`` scored 1.0). So the program is built alone, with a ``main`` of
ours that serves calls (`boundary.rs`'s ``serve``), and the test is built alone, where
every function it takes from the program is a stub generated from the program's
signature that sends the arguments to the program's sandbox and returns what comes back.

A signature crosses when its types are made of the standard library's value types
(numbers, ``bool``, ``char``, ``String``, ``Vec``, ``VecDeque``, ``Option``, ``Result``,
``Box``, the hash and B-tree maps and sets, tuples, arrays of a literal length; type
aliases are read through), each argument taken by value or behind one reference
(``&str``, ``&[T]``, ``&T``, ``&mut T``), lifetimes allowed as the only generics; read
token by token, so no other text of the program reaches the test's side. Anything else
(a type of the program's, a generic, ``impl Trait``, a raw pointer) is `Refused` (flag
``unsupported_signature``). An argument taken by ``&mut`` comes back as the function
left it (a slice keeps its length); a returned reference is to a copy the test's side
keeps for the rest of the run.

The test's names are its own: a program's ``String`` or ``assert_eq!`` is not on the
test's side, and the program's items the test does not take as functions (a ``const``,
a ``struct``) are undefined there. The program's ``use`` of the standard library comes
to the test's side as a glob import, which the test's own names override.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from importlib import resources
from typing import NoReturn

from referee.sandbox import Program
from referee.verifiers.base import ItemInvalid
from referee.verifiers.code import identifiers, rust_source
from referee.verifiers.code.boundary.declarations import UNSUPPORTED, Refused
from referee.verifiers.code.boundary.sides import SetupPlace, Sides, lines_after

HARNESS = "referee_boundary.rs"
MODULE = "referee_boundary"
TEST_MAIN = "referee_test_main"

PRIMITIVES = frozenset(
    {
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128",
        "usize", "f32", "f64", "bool", "char",
    }
)  # fmt: skip
_GENERIC = {
    "String": ("::std::string::String", 0),
    "Vec": ("::std::vec::Vec", 1),
    "VecDeque": ("::std::collections::VecDeque", 1),
    "Option": ("::std::option::Option", 1),
    "Result": ("::std::result::Result", 2),
    "Box": ("::std::boxed::Box", 1),
    "HashMap": ("::std::collections::HashMap", 2),
    "HashSet": ("::std::collections::HashSet", 1),
    "BTreeMap": ("::std::collections::BTreeMap", 2),
    "BTreeSet": ("::std::collections::BTreeSet", 1),
}
"""The standard library's types a signature may name: their paths, how many arguments."""
_STD_PATH = frozenset(
    {"std", "core", "alloc", "collections", "vec", "string", "boxed", "option", "result"}
)
"""The path segments a standard type may be written after (``std::collections::``)."""
_NAME = re.compile(r"[A-Za-z_]\w*")
_MAX_TUPLE = 6
_MAX_HEADER_CHARS = 4096
"""How much of a function's text after its name its header is read from (its tokens, per
function the test takes: the rest of the program once per function was quadratic)."""
_MAX_ALIAS_DEPTH = 8
_TOKEN = re.compile(r"::|->|'[A-Za-z_]\w*|[A-Za-z_]\w*|\d+|\S")
_FN = re.compile(
    r"\b(?:pub(?:\s*\(\s*crate\s*\))?\s+)?((?:(?:const|async|unsafe|extern)\s+"
    r"(?:\"[^\"]*\"\s+)?)*)fn\s+([A-Za-z_]\w*)\s*"
)
_ALIAS = re.compile(r"\btype\s+([A-Za-z_]\w*)\s*=\s*([^;]+);")
_USE = re.compile(r"(?m)^[ \t]*(?:pub\s+)?use\s+((?:::)?\s*(?:std|core|alloc)\s*::[^;]*);")
_MAIN = re.compile(r"\bfn\s+main\s*\(\s*\)")
_IMPL = re.compile(r"\bimpl\s+([A-Za-z_]\w*)\s*\{")
_EXIT = re.compile(r"(?<![\w:])(?:::\s*)?(?:std\s*::\s*)?process\s*::\s*exit\s*\(")
_USED = re.compile(r"(?<![\w.])(?<!::)[A-Za-z_]\w*")


@dataclass(frozen=True)
class RType:
    """A parameter's or result's type: ``text`` as the stub declares it (standard paths,
    lifetimes kept), ``owned`` the type that holds its value on either side, ``ref`` how
    it is taken (``""``, ``"&"``, ``"&mut"``) and ``unsized`` what a reference points to
    when it is not ``owned`` itself (``"str"``, ``"slice"``)."""

    text: str
    owned: str
    ref: str = ""
    unsized: str = ""


@dataclass(frozen=True)
class Signature:
    """One function the program defines and the test uses; ``owner``: the type whose
    ``impl`` block holds it (LeetCode's ``Solution::two_sum``), or ""."""

    name: str
    lifetimes: str
    params: tuple[RType, ...]
    returns: RType | None
    owner: str = ""

    @property
    def path(self) -> str:
        return f"{self.owner}::{self.name}" if self.owner else self.name


def signatures(code: str, test: str, setup: str = "") -> list[Signature]:
    """The functions ``test`` takes from ``code``: the names it uses, declares nowhere
    (nor does ``setup``), that are not the prelude's and that ``code`` declares as a
    function at its top level, in source order; then the associated functions it calls
    by path (``Solution::two_sum``) from the ``impl`` blocks of such names. Raises
    `Refused` for one that cannot cross."""
    shadow = rust_source.masked(code)
    tested = rust_source.masked(test)
    used = set(_USED.findall(tested))
    own = set(rust_source.item_names(test)) | set(rust_source.item_names(setup))
    wanted = used - own - rust_source.PRELUDE - {"main"}
    aliases = _aliases(shadow)
    depths = identifiers.brace_depths(shadow)
    found = _functions(shadow, wanted, depths, 0, (0, len(shadow)), aliases)
    for block in _IMPL.finditer(shadow):
        owner = block.group(1)
        if owner in wanted and depths[block.start()] == 0:
            called = set(re.findall(rf"(?<![\w:]){owner}\s*::\s*([A-Za-z_]\w*)", tested))
            span = (block.end(), identifiers.closing(shadow, block.end() - 1))
            for signature in _functions(shadow, called, depths, 1, span, aliases).values():
                owned = replace(signature, owner=owner)
                found[owned.path] = owned
    return list(found.values())


def _functions(
    shadow: str,
    wanted: set[str],
    depths: list[int],
    depth: int,
    span: tuple[int, int],
    aliases: dict[str, list[str]],
) -> dict[str, Signature]:
    """The signatures of the functions named in ``wanted`` declared at brace ``depth``
    within ``span`` of ``shadow``, by name, in source order."""
    found: dict[str, Signature] = {}
    for match in _FN.finditer(shadow, *span):
        name = match.group(2)
        if name in wanted and depths[match.start()] == depth and name not in found:
            qualifiers = set(match.group(1).split()) - {"const"}
            if qualifiers:
                raise Refused(UNSUPPORTED, f"{name}: an {' '.join(sorted(qualifiers))} function")
            header = shadow[match.end() : match.end() + _MAX_HEADER_CHARS]
            found[name] = _signature(name, _tokens(header), aliases)
    return found


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _aliases(shadow: str) -> dict[str, list[str]]:
    """The program's top-level ``type`` aliases without generics, as tokens."""
    depths = identifiers.brace_depths(shadow)
    return {
        m.group(1): _tokens(m.group(2)) for m in _ALIAS.finditer(shadow) if depths[m.start()] == 0
    }


class _Parser:
    """Reads a function's header from its tokens (after its name)."""

    def __init__(self, name: str, tokens: list[str], aliases: dict[str, list[str]]) -> None:
        self.name = name
        self.tokens = tokens
        self.at = 0
        self.aliases = aliases

    def peek(self) -> str:
        return self.tokens[self.at] if self.at < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if expected is not None and token != expected:
            self.refuse(f"{expected!r} where it has {token!r}")
        self.at += 1
        return token

    def refuse(self, what: str) -> NoReturn:
        raise Refused(UNSUPPORTED, f"{self.name}: {what}")


def _signature(name: str, tokens: list[str], aliases: dict[str, list[str]]) -> Signature:
    p = _Parser(name, tokens, aliases)
    lifetimes = _lifetimes(p)
    p.take("(")
    params: list[RType] = []
    while p.peek() != ")":
        _skip_pattern(p)
        params.append(_param(p))
        if p.peek() == ",":
            p.take()
    p.take(")")
    returns = None
    if p.peek() == "->":
        p.take()
        returns = _param(p, result=True)
        if returns.text == "()":
            returns = None
    if p.peek() != "{":
        p.refuse("a `where` clause or a body it cannot find")
    return Signature(name, lifetimes, tuple(params), returns)


def _lifetimes(p: _Parser) -> str:
    """``<'a, 'b>`` kept as written; other generics are refused."""
    if p.peek() != "<":
        return ""
    p.take()
    names = []
    while p.peek() != ">":
        token = p.take()
        if token == ",":
            continue
        if not token.startswith("'"):
            p.refuse("a generic function")
        names.append(token)
    p.take(">")
    return f"<{', '.join(names)}>"


def _skip_pattern(p: _Parser) -> None:
    """Skip a parameter's pattern, up to its ``:`` (outside brackets)."""
    depth = 0
    while p.peek() and not (depth == 0 and p.peek() == ":"):
        token = p.take()
        if token == "self":
            p.refuse("a method")
        depth += (token in "([{") - (token in ")]}")
    p.take(":")


def _param(p: _Parser, result: bool = False) -> RType:
    """A parameter's (or result's) type: one reference at most, at the top."""
    if p.peek() != "&":
        text = _sized(p, 0)
        return RType(text, text)
    p.take()
    lifetime = p.take() + " " if p.peek().startswith("'") else ""
    mutable = p.peek() == "mut"
    if mutable:
        p.take()
    ref = "&mut" if mutable else "&"
    head = f"&{lifetime}{'mut ' if mutable else ''}"
    if p.peek() == "str":
        p.take()
        if mutable and not result:
            p.refuse("a `&mut str` parameter")
        return RType(f"{head}str", _GENERIC["String"][0], ref, "str")
    if p.peek() == "[" and not _is_array(p):
        p.take()
        item = _sized(p, 1)
        p.take("]")
        return RType(f"{head}[{item}]", f"{_GENERIC['Vec'][0]}<{item}>", ref, "slice")
    text = _sized(p, 0)
    return RType(f"{head}{text}", text, ref)


def _is_array(p: _Parser) -> bool:
    """Whether the ``[`` ahead opens an array type (``[T; N]``), not a slice."""
    depth = 0
    for token in p.tokens[p.at :]:
        depth += (token in "([<") - (token in ")]>")
        if depth == 1 and token == ";":
            return True
        if depth == 0 and token == "]":
            return False
    return False


def _sized(p: _Parser, depth: int) -> str:
    """A type with no reference in it, as the stub writes it."""
    if depth > 32:
        p.refuse("a type nested too deep")
    token = p.peek()
    if token == "(":
        return _tuple(p, depth)
    if token == "[":
        p.take()
        item = _sized(p, depth + 1)
        p.take(";")
        length = p.take()
        if not length.isdigit():
            p.refuse("an array whose length is not a number")
        p.take("]")
        return f"[{item}; {length}]"
    name = _path(p)
    if name in PRIMITIVES:
        return name
    if name in p.aliases:
        return _alias(p, name, depth)
    if name not in _GENERIC:
        p.refuse(f"a type it cannot send ({name!r})")
    path, count = _GENERIC[name]
    if count == 0:
        return path
    p.take("<")
    args = [_sized(p, depth + 1)]
    while p.peek() == ",":
        p.take()
        args.append(_sized(p, depth + 1))
    p.take(">")
    if len(args) != count:
        p.refuse(f"{name} with {len(args)} type arguments")
    return f"{path}<{', '.join(args)}>"


def _path(p: _Parser) -> str:
    """A type's name, its standard path (``std::collections::``) dropped."""
    if p.peek() == "::":
        p.take()
    name = p.take()
    while p.peek() == "::":
        if name not in _STD_PATH:
            p.refuse(f"a type of a path it cannot read ({name}::)")
        p.take()
        name = p.take()
    if not _NAME.fullmatch(name):
        p.refuse(f"a type it cannot read ({name!r})")
    return name


def _tuple(p: _Parser, depth: int) -> str:
    p.take("(")
    items: list[str] = []
    while p.peek() != ")":
        items.append(_sized(p, depth + 1))
        if p.peek() == ",":
            p.take()
        elif p.peek() != ")":
            p.refuse("a tuple it cannot read")
    p.take(")")
    if len(items) > _MAX_TUPLE:
        p.refuse(f"a tuple of more than {_MAX_TUPLE}")
    if len(items) == 1:
        return f"({items[0]},)"
    return f"({', '.join(items)})"


def _alias(p: _Parser, name: str, depth: int) -> str:
    """The type an alias names, read in place (at most `_MAX_ALIAS_DEPTH` deep)."""
    if depth > _MAX_ALIAS_DEPTH * 4:
        p.refuse(f"an alias it cannot read through ({name})")
    inner = _Parser(p.name, [*p.aliases[name], "{"], p.aliases)
    text = _sized(inner, depth + 4)
    if inner.peek() != "{":
        p.refuse(f"an alias it cannot read through ({name})")
    return text


def programs(code: str, test: str, setup: str) -> Sides:
    """The program's side and the test's (`program`, `tester`). Raises `Refused`, or
    `ItemInvalid` for a test without ``fn main()``."""
    exported = signatures(code, test, setup)
    built, test_lines = tester(code, setup, test, exported)
    place = None
    if setup.strip():
        above = f"mod {MODULE};\n{_uses(code)}"
        place = SetupPlace(lines_after(above, setup), side="tester")
    return Sides(program(code, setup, exported), built, test_lines, place)


def program(code: str, setup: str, exported: list[Signature]) -> Program:
    """The program's side: ``setup`` and ``code`` (its own ``main`` renamed), a function
    serving each ``exported`` one, and a ``main`` serving the calls."""
    code = identifiers.own_main_renamed(code, rust_source.masked(code))
    serving = "".join(_serving(index, s) for index, s in enumerate(exported))
    table = ", ".join(f"referee_serve_{i}" for i in range(len(exported)))
    source = (  # the program first: its inner attributes (`#![...]`) must lead the file
        f"{code}\n{setup}\n\nmod {MODULE};\n{serving}"
        f"const REFEREE_CALLS: &[{MODULE}::Serving] = &[{table}];\n"
        f"fn main() {{\n    {MODULE}::serve(REFEREE_CALLS)\n}}\n"
    )
    return Program(language="rust", source=source, files={HARNESS: _harness()})


def tester(code: str, setup: str, test: str, exported: list[Signature]) -> tuple[Program, range]:
    """The test's side (and the lines of its source that hold the test): the program's uses
    of the standard library (a glob import, which the test's own names override), ``setup``,
    a stub for every ``exported`` function, then ``test`` with its ``main`` run by
    ``run_test``, which prints the verdict. Raises `ItemInvalid` for a test without ``fn
    main()``."""
    renamed, count = _MAIN.subn(f"fn {TEST_MAIN}()", _exits_rewritten(test), count=1)
    if count == 0:
        raise ItemInvalid("invalid_reference", "reference.test: no `fn main()` found")
    above = f"mod {MODULE};\n{_uses(code)}{setup}\n{_stubs(exported)}"
    source = f"{above}{renamed}\n\nfn main() {{\n    {MODULE}::run_test({TEST_MAIN})\n}}\n"
    built = Program(language="rust", source=source, files={HARNESS: _harness()})
    return built, lines_after(above, renamed)


def _serving(index: int, signature: Signature) -> str:
    """The program's side of one function: read the arguments, call, write the reply.
    Every name it declares is ``referee_``'s: a program function named ``w`` or ``a0``
    is called, not shadowed."""
    lines = [
        f"let mut referee_a{i}: {p.owned} = {MODULE}::Cross::get(referee_r)?;"
        for i, p in enumerate(signature.params)
    ]
    lines.append("referee_r.done()?;")
    passed = {"": "referee_a{}", "&": "&referee_a{}", "&mut": "&mut referee_a{}"}
    args = ", ".join(passed[p.ref].format(i) for i, p in enumerate(signature.params))
    returns = signature.returns
    call = f"{signature.path}({args})"
    lines.append(f"let referee_result = {call};" if returns else f"{call};")
    lines.append("referee_w.push(0);")
    if returns is not None:
        lines.append(f"{MODULE}::send({'&*' if returns.ref else '&'}referee_result, referee_w);")
    lines += [
        f"{MODULE}::send(&referee_a{i}, referee_w);"
        for i, p in enumerate(signature.params)
        if p.ref == "&mut"
    ]
    lines.append("Ok(())")
    body = "".join(f"    {line}\n" for line in lines)
    head = (
        f"#[allow(unused_mut, unused_variables, clippy::all)]\nfn referee_serve_{index}("
        f"referee_r: &mut {MODULE}::Reader, referee_w: &mut ::std::vec::Vec<u8>) -> "
        f"::std::result::Result<(), {MODULE}::Broken>"
    )
    return f"{head} {{\n{body}}}\n"


def _stubs(exported: list[Signature]) -> str:
    """A stub for every function, an associated one in an ``impl`` of a unit struct of
    its owner's name (the test names only the path: ``Solution::two_sum``)."""
    free = "".join(_stub(i, s) for i, s in enumerate(exported) if not s.owner)
    owners = dict.fromkeys(s.owner for s in exported if s.owner)
    for owner in owners:
        inner = "".join(_stub(i, s) for i, s in enumerate(exported) if s.owner == owner)
        indented = "".join(f"    {line}\n" if line else "\n" for line in inner.splitlines())
        free += f"pub struct {owner};\n\nimpl {owner} {{\n{indented}}}\n\n"
    return free


def _stub(index: int, signature: Signature) -> str:
    """The test's side of one function: a function of the program's name and signature
    that calls it in the program's sandbox."""
    params = ", ".join(f"a{i}: {p.text}" for i, p in enumerate(signature.params))
    returns = signature.returns
    arrow = f" -> {returns.text}" if returns else ""
    sent = {"": "&a{}", "&": "a{}", "&mut": "&*a{}"}
    lines = [f'let mut c = {MODULE}::Call::begin({index}, "{signature.path}");']
    lines += [
        f"{MODULE}::send({sent[p.ref].format(i)}, &mut c.out);"
        for i, p in enumerate(signature.params)
    ]
    lines.append("c.exchange();")
    if returns is not None:
        lines.append(f"let result: {returns.owned} = c.get();")
    for i, p in enumerate(signature.params):
        if p.ref == "&mut":
            lines.append(f"c.back_slice(a{i});" if p.unsized else f"*a{i} = c.get();")
    lines.append("c.finish();")
    if returns is not None:
        lines.append(_returned(returns))
    body = "".join(f"    {line}\n" for line in lines)
    name = f"{signature.name}{signature.lifetimes}"
    visible = "pub " if signature.owner else ""
    head = f"#[allow(unused_mut, clippy::all)]\n{visible}fn {name}({params}){arrow}"
    return f"{head} {{\n{body}}}\n\n"


def _returned(returns: RType) -> str:
    """The stub's result: a reference is to a copy kept for the rest of the run."""
    if not returns.ref:
        return "result"
    leak = {"str": "leaked_str", "slice": "leaked_slice", "": "leaked"}[returns.unsized]
    return f"{MODULE}::{leak}(result)"


def _uses(code: str) -> str:
    """The program's top-level ``use`` of the standard library, as a module the test's
    side glob-imports: a name the test declares or imports itself overrides it. A
    ``use`` that renames, or that names one of the prelude's names (which a glob import
    would shadow: ``use std::fmt::Result``), is the program's own."""
    shadow = rust_source.masked(code)
    depths = identifiers.brace_depths(shadow)
    uses = []
    for found in _USE.finditer(shadow):
        path = code[found.start(1) : found.end(1)].strip()
        words = set(_NAME.findall(path))
        # (a path with a brace left open would swallow the setup after it)
        balanced = path.count("{") == path.count("}")
        own = "as" in words or words & rust_source.PRELUDE
        if depths[found.start()] == 0 and balanced and not own:
            uses.append(f"    pub use {path};\n")
    if not uses:
        return ""
    lines = "".join(dict.fromkeys(uses))
    module = f"#[allow(unused_imports)]\nmod referee_program_uses {{\n{lines}}}\n"
    return f"{module}use referee_program_uses::*;\n"


def _exits_rewritten(test: str) -> str:
    """``test`` with its ``std::process::exit`` calls made the harness's, which gives a
    verdict from the status (the process would otherwise end without one)."""
    shadow = rust_source.masked(test)
    return identifiers.calls_replaced(test, shadow, _EXIT, lambda _: f"{MODULE}::exit(")


def _harness() -> str:
    return (resources.files(__package__) / "boundary.rs").read_text(encoding="utf-8")
