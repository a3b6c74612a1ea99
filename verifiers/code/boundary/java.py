"""The boundary between a Java program and its assert test: two sandboxes, two JVMs.

As for every other language: a test appended to the program shares its process, and a
screen of the source stops only the attacks it names (reflection found the test's class
on the stack and read its fields; a heap dump found its proof; its class file held its
constants). Here the program is built alone, with a ``Main`` of ours that serves calls
(`boundary.java`'s ``serve``: static methods, constructors and methods of objects it
made, found by reflection), and the test is built alone, where every class it takes
from the program is a stub class of that name generated from the program's declarations,
whose members send their arguments to the program's JVM and return what comes back.

Two shapes of test: one with its own ``class Main`` (a test that makes ``new
Solution()`` and calls its methods), and MultiPL-E's, which goes on inside the class the
program's prompt left open, calling its static methods by their bare names.

A member crosses when its types are made of primitives, their boxes, ``String``, arrays
and the ``java.util`` lists, sets, maps and ``Optional`` of them, and javatuples'
``Pair``, ``Triplet`` and ``Quartet`` (MultiPL-E's HumanEval-Java returns ``Pair``), and
``Object`` holding a box, a ``String`` or a collection of such (its class crosses too),
read word by word, so no other text of the program reaches the test's side. A member
that does not is left out of the stub; one the test calls by name with no overload that
crosses is `Refused`
(flag ``unsupported_signature``). Arrays and collections passed to the program come
back as it left them and are changed in the test's own (an in-place sort); the
program's exceptions of the platform's unchecked kinds are thrown again by their class
(a test may expect an ``IllegalArgumentException``); a test that calls
``System.exit`` gets a verdict from its status.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources

from referee.sandbox import Program, toolchains
from referee.verifiers.base import ItemInvalid
from referee.verifiers.code import identifiers, java_source
from referee.verifiers.code.boundary.declarations import UNSUPPORTED, Refused
from referee.verifiers.code.boundary.sides import SetupPlace, Sides, lines_after

HARNESS = "RefereeBoundary.java"
TEST_CLASS = "RefereeTestMain"
PROGRAM_MAIN = "RefereeProgramMain"

PRIMITIVES = frozenset({"boolean", "byte", "short", "int", "long", "char", "float", "double"})
_NAMES = {
    **{n: f"java.lang.{n}" for n in ("Boolean", "Byte", "Short", "Integer", "Long")},
    **{n: f"java.lang.{n}" for n in ("Character", "Float", "Double", "String", "Object")},
    **{
        n: f"java.util.{n}"
        for n in (
            "List", "ArrayList", "LinkedList", "Collection", "Set", "HashSet", "TreeSet",
            "LinkedHashSet", "Map", "HashMap", "TreeMap", "LinkedHashMap", "Optional",
        )
    },
}  # fmt: skip
_TUPLES = {"Pair": 2, "Triplet": 3, "Quartet": 4}
"""javatuples' (``org.javatuples``, in the sandbox's runtime), by their arity."""
_NAMES |= {name: f"org.javatuples.{name}" for name in _TUPLES}
"""The classes a member's types may name, by their simple names."""
_ARITY = {
    **{name: 1 for name in ("List", "ArrayList", "LinkedList", "Collection", "Set")},
    **{name: 1 for name in ("HashSet", "TreeSet", "LinkedHashSet", "Optional")},
    **{name: 2 for name in ("Map", "HashMap", "TreeMap", "LinkedHashMap")},
    **_TUPLES,
}
_TOKEN = re.compile(r"\.\.\.|[A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*|\S")
_CALL_OPEN = re.compile(r"([A-Za-z_$][\w$]*)\s*\(")
_BODY_AFTER = re.compile(r"\s*(?:throws\s+[\w$.,\s]*)?\{")
_ANNOTATION = re.compile(r"@[\w$.]+")
_MAX_HEAD_CHARS = 512
"""How far before a member's name its modifiers and type are read (each member's text is
read within bounds: one regular expression over the whole body was quadratic)."""
_MODIFIER = re.compile(
    r"\b(public|protected|private|static|final|synchronized|abstract|native|strictfp)\b"
)
_MAX_DEPTH = 32
"""How deep a member's types may nest (read recursively: a deeper one is refused)."""
_KEYWORDS = frozenset({"if", "for", "while", "switch", "catch", "return", "new", "else", "do"})
_MAIN_CLASS = re.compile(r"\b(?:public\s+)?(?:final\s+)?class\s+Main\b")
_EXIT = re.compile(r"(?<![\w$.])(?:java\s*\.\s*lang\s*\.\s*)?System\s*\.\s*exit\s*\(")


@dataclass(frozen=True)
class Member:
    """A static method, an instance method or (``name`` "<init>") a constructor of the
    program's class ``owner``, with its types as the harness names them."""

    owner: str
    name: str
    static: bool
    params: tuple[str, ...]
    returns: str
    variadic: bool = False


def exports(code: str, test: str, setup: str = "") -> tuple[list[Member], str | None]:
    """The members the test takes from ``code``, and the class the program leaves open
    for a test in MultiPL-E's shape (None for a test with a ``class Main``). Raises
    `Refused` for a member the test calls whose signatures cannot cross."""
    shadow = java_source.masked(java_source.unescaped(code))
    tested = java_source.masked(test)
    if _MAIN_CLASS.search(tested) is not None:
        own = set(java_source.top_level_types(test)) | set(java_source.top_level_types(setup))
        # a class of the program's named like a library class the test imports is not
        # the test's: its `Arrays.asList` stays java.util's (in one file the program's
        # hid it, and got the test's expected values: shadow_arrays.java scored 1.0)
        library = toolchains.java_library_types()
        hidden = java_source.shadowing(code, test, setup, library)
        own |= {name.rsplit(".", 1)[-1] for name in hidden}
        used = set(re.findall(r"[A-Za-z_$][\w$]*", tested))
        owners = [t for t in java_source.top_level_types(code) if t in used and t not in own]
        members = [m for owner in owners for m in _members(shadow, owner, tested, static=False)]
        return members, None
    host = java_source.open_class(code)
    if host is None:
        raise ItemInvalid(
            "invalid_reference",
            "reference.test: no `class Main` found, nor a class the program leaves open "
            "(MultiPL-E)",
        )
    return _members(shadow, host, tested, static=True), host


def _members(shadow: str, owner: str, tested: str, static: bool) -> list[Member]:
    """The members of the program's top-level class ``owner`` that cross (``static``:
    only its static methods, which the test calls by bare name); `Refused` for a name the
    test calls with no overload that crosses."""
    body = _class_body(shadow, owner)
    if body is None:
        return []
    declared = list(_declarations(shadow, *body))
    found: list[Member] = []
    refused: dict[str, str] = {}
    for name, written, params in declared:
        mods = set(_MODIFIER.findall(written))
        head = _MODIFIER.sub(" ", written).strip()
        constructor = name == owner and not head
        if "private" in mods or (static and ("static" not in mods or constructor)):
            continue
        try:
            if head.startswith("<"):
                raise Refused(UNSUPPORTED, f"{owner}.{name}: a generic method")
            found.append(_member(owner, name, head, params, mods, constructor))
        except Refused as exc:
            refused.setdefault(name, str(exc))
    kept = {m.name for m in found} | {owner}
    for name, why in refused.items():
        if name not in kept and re.search(rf"(?<![\w$]){re.escape(name)}\s*\(", tested):
            raise Refused(UNSUPPORTED, why)
    if not static and not any(name == owner for name, _, _ in declared):
        found.append(Member(owner, "<init>", False, (), "void"))  # the default constructor
    return found


def _declarations(shadow: str, start: int, end: int) -> Iterator[tuple[str, str, str]]:
    """(name, head, parameters) of each method or constructor declared at the top of the
    class body ``shadow[start:end]``: a name, a parameter list without parentheses in it,
    then a body; its head (modifiers, type parameters, type) is what stands between the
    previous ``;``, brace or ``)`` and the name, annotations dropped. Each candidate is
    read within bounds, so the whole is linear in the body."""
    depths = identifiers.brace_depths(shadow)
    for found in _CALL_OPEN.finditer(shadow, start, end):
        name = found.group(1)
        if depths[found.start()] != depths[start] or name in _KEYWORDS:
            continue
        close = shadow.find(")", found.end(), min(end, found.end() + _MAX_HEAD_CHARS * 4))
        params = shadow[found.end() : close]
        if close < 0 or "(" in params:
            continue
        if not _BODY_AFTER.match(shadow, close + 1, min(end, close + 1 + _MAX_HEAD_CHARS)):
            continue
        window = shadow[max(start, found.start() - _MAX_HEAD_CHARS) : found.start()]
        cut = max(window.rfind(mark) for mark in ";{})") + 1
        yield name, _ANNOTATION.sub(" ", window[cut:]), params


def _class_body(shadow: str, owner: str) -> tuple[int, int] | None:
    """Where the top-level class ``owner``'s body starts (after its ``{``) and ends."""
    depths = identifiers.brace_depths(shadow)
    for found in re.finditer(rf"\b(?:class|record|enum)\s+{re.escape(owner)}\b[^{{;]*\{{", shadow):
        if depths[found.start()] == 0:
            start = found.end()
            end = next((i for i in range(start, len(shadow)) if depths[i] == 0), len(shadow))
            return start, end
    return None


def _member(
    owner: str, name: str, head: str, params: str, mods: set[str], constructor: bool
) -> Member:
    where = f"{owner}.{name}"
    returns = "void" if constructor or head == "void" else _type(head, where)
    types: list[str] = []
    variadic = False
    for text in _split(params):
        declared = re.sub(r"\bfinal\s+|@\w+\s*", "", text).strip()
        kind = re.match(r"([\s\S]*?)\s*(?:\.\.\.\s*)?[A-Za-z_$][\w$]*\s*$", declared)
        if kind is None:
            raise Refused(UNSUPPORTED, f"{where}: a parameter it cannot read ({text.strip()!r})")
        written = kind.group(1).strip()
        variadic = "..." in declared
        types.append(_type(written, where) + ("[]" if variadic else ""))
    return Member(
        owner, "<init>" if constructor else name, "static" in mods, tuple(types), returns, variadic
    )


def _split(params: str) -> list[str]:
    """A parameter list split at its commas outside ``<>``."""
    parts, depth, last = [], 0, 0
    for index, char in enumerate(params):
        depth += (char == "<") - (char == ">")
        if char == "," and depth == 0:
            parts.append(params[last:index])
            last = index + 1
    parts.append(params[last:])
    return [p for p in parts if p.strip()]


def _type(text: str, where: str) -> str:
    """``text`` as the harness names the type, or `Refused`."""
    tokens = _TOKEN.findall(text)
    parsed, at = _parse(tokens, 0, where)
    if at != len(tokens):
        raise Refused(UNSUPPORTED, f"{where}: a type it cannot send ({text.strip()!r})")
    return parsed


def _parse(tokens: list[str], at: int, where: str, depth: int = 0) -> tuple[str, int]:
    if depth > _MAX_DEPTH:
        raise Refused(UNSUPPORTED, f"{where}: a type nested deeper than {_MAX_DEPTH}")
    if at >= len(tokens):
        raise Refused(UNSUPPORTED, f"{where}: a type it cannot read")
    word = re.sub(r"\s+", "", tokens[at])
    simple = word.removeprefix("java.util.").removeprefix("java.lang.")
    simple = simple.removeprefix("org.javatuples.")
    at += 1
    if simple in PRIMITIVES:
        text = simple
    elif simple in _NAMES:
        text = _NAMES[simple]
        arity = _ARITY.get(simple, 0)
        if arity:
            if at >= len(tokens) or tokens[at] != "<":
                raise Refused(UNSUPPORTED, f"{where}: a raw {simple}")
            args = []
            for index in range(arity):
                if tokens[at] != ("<" if index == 0 else ","):
                    raise Refused(UNSUPPORTED, f"{where}: {simple} with other type arguments")
                arg, at = _parse(tokens, at + 1, where, depth + 1)
                if arg in PRIMITIVES:
                    raise Refused(UNSUPPORTED, f"{where}: a primitive type argument")
                args.append(arg)
            if at >= len(tokens) or tokens[at] != ">":
                raise Refused(UNSUPPORTED, f"{where}: {simple} with other type arguments")
            at += 1
            text = f"{text}<{', '.join(args)}>"
    else:
        raise Refused(UNSUPPORTED, f"{where}: a type it cannot send ({word})")
    while at + 1 < len(tokens) and tokens[at] == "[" and tokens[at + 1] == "]":
        text += "[]"
        at += 2
    return text, at


def programs(code: str, test: str, setup: str) -> Sides:
    """The program's side and the test's (`program`, `tester`). Raises `Refused`, or
    `ItemInvalid` for a test of no shape it runs."""
    members, host = exports(code, test, setup)
    built = program(code, setup, members, host, test)
    sides = Sides(built, *tester(code, setup, test, members, host))
    if not setup.strip():
        return sides
    # the setup comes after the imports, whose lines are single, well-formed statements
    place = SetupPlace(lines_after(f"{_program_imports(setup, code, test)}\n", setup))
    return sides._replace(setup_place=place)


def program(
    code: str, setup: str, members: list[Member], host: str | None, test: str = ""
) -> Program:
    """The program's side: ``setup`` and ``code`` (imports hoisted, with the ``test``'s,
    top-level types made non-public, its own ``Main`` renamed, the class ``host`` it
    leaves open for the test closed), and a ``Main`` serving ``members``."""
    if host is not None:
        code = f"{code}\n}}\n"
    imports = _program_imports(setup, code, test)
    setup, code = java_source.hoisted(setup)[0], java_source.hoisted(code)[0]
    code = java_source.unpublished(java_source.main_renamed(code, PROGRAM_MAIN))
    table = "".join(f"            {_function(m)},\n" for m in members)
    launcher = (
        "public class Main {\n    public static void main(String[] args) {\n"
        f"        RefereeBoundary.serve(new RefereeBoundary.Function[] {{\n{table}"
        "        });\n    }\n}\n"
    )
    source = f"{imports}\n{java_source.unpublished(setup)}\n{code}\n{launcher}"
    return Program(language="java", source=source, files={HARNESS: _harness()})


def _program_imports(setup: str, code: str, test: str) -> str:
    """The program's side's imports, one per line: the setup's, the program's and the
    test's (in one file with it, a program used the names they bring: an answer without
    ``import java.util.*;`` beside a test with one compiled)."""
    found = (java_source.hoisted(text)[1] for text in (setup, code, test))
    return "\n".join(dict.fromkeys(name for names in found for name in names))


def tester(
    code: str, setup: str, test: str, members: list[Member], host: str | None
) -> tuple[Program, range]:
    """The test's side (and the lines of its source that hold the test): the program's and
    the test's imports, ``setup``, a stub class for every class the test takes from the
    program (for MultiPL-E's shape, the open class ``host``, which the test goes on inside),
    the test, and a ``Main`` running it."""
    (setup, above), (_, mine), (test, theirs) = map(java_source.hoisted, (setup, code, test))
    imports = "\n".join(dict.fromkeys([*above, *mine, *theirs]))
    test = _exits_rewritten(test)
    if host is None:
        declared = _MAIN_CLASS.search(java_source.masked(test))
        assert declared is not None  # `exports` found it
        test = f"{test[: declared.start()]}class {TEST_CLASS}{test[declared.end() :]}"
        stubs = "".join(_stub_class(o, members) for o in dict.fromkeys(m.owner for m in members))
        entry = TEST_CLASS
    else:
        stubs = f"class {host} {{\n{''.join(_stub(i, m) for i, m in enumerate(members))}"
        entry = host
    launcher = (
        "public class Main {\n    public static void main(String[] args) {\n"
        f"        RefereeBoundary.runTest(() -> {entry}.main(args));\n    }}\n}}\n"
    )
    # `unpublished` blanks what it cuts: the test keeps its lines
    before = f"{imports}\n{setup}\n{stubs}\n"
    body = java_source.unpublished(f"{setup}\n{stubs}\n{test}")
    source = f"{imports}\n{body}\n{launcher}"
    built = Program(language="java", source=source, files={HARNESS: _harness()})
    return built, lines_after(before, test)


def _function(member: Member) -> str:
    fields = ", ".join(
        f'"{t}"' for t in (member.owner, member.name, member.returns, *member.params)
    )
    return f"new RefereeBoundary.Function({fields})"


def _stub_class(owner: str, members: list[Member]) -> str:
    handle = "    private long refereeHandle;\n"
    body = "".join(_stub(i, m) for i, m in enumerate(members) if m.owner == owner)
    return f"class {owner} {{\n{handle}{body}}}\n"


def _stub(index: int, member: Member) -> str:
    """One member of a stub class: calls the program's in its JVM."""
    params = [f"{t} a{i}" for i, t in enumerate(member.params)]
    if member.variadic:
        params[-1] = f"{member.params[-1][:-2]}... a{len(params) - 1}"
    types = ", ".join(f'"{t}"' for t in member.params)
    args = ", ".join(f"a{i}" for i in range(len(member.params)))
    constructor = member.name == "<init>"
    label = member.owner if constructor else f"{member.owner}.{member.name}"
    kind = 1 if constructor else 0 if member.static else 2
    handle = "refereeHandle" if kind == 2 else "0"
    call = (
        f'RefereeBoundary.call({kind}, {index}, {handle}, "{label}", "{member.returns}", '
        f"new String[] {{{types}}}, new Object[] {{{args}}})"
    )
    if constructor:
        body = f"        refereeHandle = (Long) {call};\n"
        return f"    {member.owner}({', '.join(params)}) {{\n{body}    }}\n"
    static = "static " if member.static else ""
    head = f"    public {static}{member.returns} {member.name}({', '.join(params)})"
    if member.returns == "void":
        return f"{head} {{\n        {call};\n    }}\n"
    cast = _BOXED.get(member.returns, member.returns)
    unchecked = '    @SuppressWarnings("unchecked")\n'
    return f"{unchecked}{head} {{\n        return ({cast}) {call};\n    }}\n"


_BOXED = {
    "boolean": "Boolean", "byte": "Byte", "short": "Short", "int": "Integer", "long": "Long",
    "char": "Character", "float": "Float", "double": "Double",
}  # fmt: skip


def _exits_rewritten(test: str) -> str:
    """``test`` with its ``System.exit`` calls made the harness's, which gives a verdict
    from the status (the JVM would otherwise end without one)."""
    shadow = java_source.masked(test)
    return identifiers.calls_replaced(test, shadow, _EXIT, lambda _: "RefereeBoundary.exit(")


def _harness() -> str:
    return (resources.files(__package__) / "boundary.java").read_text(encoding="utf-8")
