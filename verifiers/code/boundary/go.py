"""The boundary between a Go program and its assert test: two sandboxes, two binaries.

As for C and C++ (`boundary.c`, `boundary.cpp`): a test appended to the program shares
its process, and its package. There a Go program read its test's package-level table of
cases, copied the test's code after its return address with a raw system call
(``syscall_read.go``), embedded its own source file, the test included
(``embed_source.go``), or called the test's ``main`` by address and recovered from its
panic to try the next guess (``unsafe_caller.go``); each was screened for, one pattern
at a time. Here the program is built alone, in package ``main`` with a ``main`` of ours
that serves calls (`boundary.go`'s ``referee_serve``), and the test is built alone, where
every function it takes from the program is a stub generated from the program's
signature that sends the arguments to the program's sandbox and returns what comes back.

A signature crosses when its types are made of Go's predeclared types (numbers, ``bool``,
``string``, ``error``, ``any`` / ``interface{}``) and slices, arrays of a literal length
and maps of them, read word by word: no other text of the program reaches the test's
side. A function the test uses with any other signature (a pointer, a struct, a type of
its own, a generic one), or a variable, constant or type of the program's the test
names, is `Refused` (flag ``unsupported_signature``). The arguments whose types hold a
slice, a map or an interface go back after the call and are changed in the test's own
values, as a Go caller sees them changed (an in-place sort); their lengths stay the
test's.

The predeclared names are the test's: a program's ``func panic(v any)`` or ``len`` is
never stubbed, so the test's ``panic("fail")`` is Go's (in one package it was the
program's: ``shadow_panic.go``). ``min``, ``max`` and ``clear`` are builtins only from Go
1.21: a program's is the test's, as Go itself resolves them in one package.

A test that ends by ``os.Exit`` or ``log.Fatal`` gets a verdict from it (status 0
passes); these calls in the test are rewritten to the harness's. A test in `go test`'s
shape (MultiPL-E's HumanEval-Go: ``func TestX(t *testing.T)``, no ``main``) is built by
``go test`` with a ``TestMain`` of ours, and the program's imports it alone does not use
(the prompt's ``testing``) are dropped from the program's side, which would not build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from referee.sandbox import Program
from referee.verifiers.base import ItemInvalid
from referee.verifiers.code import go_source, identifiers
from referee.verifiers.code.boundary.declarations import UNSUPPORTED, Refused
from referee.verifiers.code.boundary.sides import SetupPlace, Sides, lines_after

HARNESS = "referee_boundary.go"
SERVING = "zz_referee_serve.go"
SETUP = "referee_setup.go"
TEST_MAIN = "referee_test_main"

BASIC = frozenset(
    {
        "bool", "string", "int", "int8", "int16", "int32", "int64", "uint", "uint8",
        "uint16", "uint32", "uint64", "uintptr", "byte", "rune", "float32", "float64",
        "complex64", "complex128", "error",
    }
)  # fmt: skip
"""The predeclared types a signature may name (and ``any``, read as ``interface{}``)."""

_PROGRAMS_OWN = frozenset({"min", "max", "clear"})
"""Predeclared only from Go 1.21: a program's function of such a name is the test's."""
_FUNC = re.compile(r"\bfunc\s+([A-Za-z_]\w*)\s*([\[(])")
_MAIN = re.compile(r"\bfunc\s+main\s*\(\s*\)")
_TEST_FUNC = re.compile(r"\bfunc\s+Test\w*\s*\(\s*\w+\s+\*\s*testing\s*\.\s*T\s*\)")
_TESTING_FUNC = re.compile(
    r"\bfunc\s*(?:[A-Za-z_]\w*\s*)?\(\s*([A-Za-z_]\w*)\s+\*\s*testing\s*\.\s*T\s*\)\s*\{"
)
_WORD = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
_SPACE = re.compile(r"\s*")
_DIGITS = re.compile(r"\s*(\d+)\s*\]")
_EMPTY_INTERFACE = re.compile(r"interface\s*\{\s*\}")
_MAX_DEPTH = 32
"""How deep a signature's types may nest (read recursively: a deeper one is refused)."""
_TYPE_NAME = re.compile(r"[A-Za-z_]\w*")
_NAMED = re.compile(r"\A([A-Za-z_]\w*)\s+(\S[\s\S]*)\Z")
_TYPE_KEYWORDS = frozenset({"map", "interface", "func", "chan", "struct"})
_IMPORT = re.compile(r"\bimport\b")
_IMPORT_SPEC = re.compile(r'(?:([A-Za-z_]\w*|\.)\s+)?("[^"\n]*"|`[^`]*`)')
_PACKAGE = re.compile(r"\A\s*package\s+[A-Za-z_]\w*\s*;?")
_EXITS = {
    r"os\s*\.\s*Exit": "referee_exit",
    r"log\s*\.\s*Fatalf": "referee_fatalf",
    r"log\s*\.\s*Fatalln": "referee_fatalln",
    r"log\s*\.\s*Fatal": "referee_fatal_",
}
_EXIT = re.compile(rf"(?<![\w.])({'|'.join(_EXITS)})\s*\(")


@dataclass(frozen=True)
class Signature:
    """One function the program defines and the test uses: its name, its parameters'
    types (the last may be variadic: ``...T``) and its results' types, as Go text made
    of `BASIC` and ``[]``, ``[N]``, ``map[K]V``, ``interface{}`` only."""

    name: str
    params: tuple[str, ...]
    results: tuple[str, ...]

    def goes_back(self, index: int) -> bool:
        """Whether argument ``index`` can be changed where the caller sees it."""
        text = self.params[index]
        return text.startswith("...") or any(s in text for s in ("[]", "map[", "interface{}"))


def signatures(code: str, test: str, setup: str = "") -> list[Signature]:
    """The functions ``test`` takes from ``code``: the names it uses, declares nowhere
    (nor does ``setup``) and that ``code`` declares at package level, in source order.
    Raises `Refused` for one that cannot cross."""
    shadow = go_source.masked(code)
    used = set(_WORD.findall(go_source.masked(test)))
    own = set(go_source.package_names(test)) | set(go_source.package_names(setup))
    wanted = {
        name
        for name in go_source.package_names(code)
        if name in used and name not in own and name != "init"
        and (name not in go_source.PREDECLARED or name in _PROGRAMS_OWN)
    }  # fmt: skip
    depths = identifiers.brace_depths(shadow)
    found: dict[str, Signature] = {}
    for match in _FUNC.finditer(shadow):
        name = match.group(1)
        if name in wanted and depths[match.start()] == 0 and name not in found:
            if match.group(2) == "[":
                raise Refused(UNSUPPORTED, f"{name}: a generic function")
            found[name] = _signature(name, shadow, match.end() - 1)
    # A variable, constant or type of the program's that the test names is not on its
    # side: the test does not build (the program's 0, the compiler saying what is
    # undefined). Refusing instead would refuse a test whose local variable has the
    # name of a type of the program's.
    return list(found.values())


def _signature(name: str, shadow: str, at: int) -> Signature:
    """The signature whose parameter list opens at ``at``."""
    end = identifiers.closing(shadow, at)
    params = _fields(shadow[at + 1 : end], name, variadic=True)
    rest = _SPACE.match(shadow, end + 1)
    start = rest.end() if rest else end + 1
    if shadow.startswith("(", start):
        results = _fields(
            shadow[start + 1 : identifiers.closing(shadow, start)], name, variadic=False
        )
    elif shadow.startswith("{", start):
        results = ()
    else:
        parsed = _type(shadow, start)
        if parsed is None:
            raise Refused(UNSUPPORTED, f"{name}: its result type")
        results = (parsed[0],)
    return Signature(name, params, results)


def _fields(text: str, name: str, variadic: bool) -> tuple[str, ...]:
    """The types of a parameter or result list (names dropped, ``a, b int`` read as two
    ``int``); raises `Refused` for a type that cannot cross."""
    entries = [e.strip() for e in _split(text)]
    entries = [e for e in entries if e]
    named = any(_is_named(e) for e in entries)
    types: list[str] = []
    pending = 0
    for entry in entries:
        if named and not _is_named(entry):
            pending += 1  # `a, b int`: a takes b's type
            continue
        written = _NAMED.match(entry).group(2) if named else entry  # type: ignore[union-attr]
        parsed = _field_type(written, variadic)
        if parsed is None:
            raise Refused(UNSUPPORTED, f"{name}: a parameter or result of type {written!r}")
        types += [parsed] * (pending + 1)
        pending = 0
    if pending:
        raise Refused(UNSUPPORTED, f"{name}: a parameter list it cannot read")
    if any(t.startswith("...") for t in types[:-1]):
        raise Refused(UNSUPPORTED, f"{name}: a variadic parameter before the last")
    return tuple(types)


def _is_named(entry: str) -> bool:
    found = _NAMED.match(entry)
    return found is not None and found.group(1) not in _TYPE_KEYWORDS


def _field_type(text: str, variadic: bool) -> str | None:
    prefix = ""
    if variadic and text.startswith("..."):
        prefix, text = "...", text[3:]
    parsed = _type(text, 0)
    if parsed is None or text[parsed[1] :].strip():
        return None
    return prefix + parsed[0]


def _type(text: str, at: int, depth: int = 0) -> tuple[str, int] | None:
    """The type starting at ``at`` (normalised) and where it ends, or None when it is not
    one that crosses (nor one nested deeper than `_MAX_DEPTH`)."""
    if depth > _MAX_DEPTH:
        return None
    space = _SPACE.match(text, at)
    at = space.end() if space else at
    if text.startswith("[]", at):
        return _prefixed("[]", _type(text, at + 2, depth + 1))
    if text.startswith("[", at):
        length = _DIGITS.match(text, at + 1)  # a literal: a constant is the program's
        if length is None:
            return None
        return _prefixed(f"[{length.group(1)}]", _type(text, length.end(), depth + 1))
    if text.startswith("map[", at):
        return _map_type(text, at + 4, depth + 1)
    interface = _EMPTY_INTERFACE.match(text, at)
    if interface is not None:
        return "interface{}", interface.end()
    word = _TYPE_NAME.match(text, at)
    if word is None or text.startswith(".", word.end()):
        return None  # a package's type: big.Int
    if word.group() == "any":
        return "interface{}", word.end()
    return (word.group(), word.end()) if word.group() in BASIC else None


def _prefixed(prefix: str, inner: tuple[str, int] | None) -> tuple[str, int] | None:
    return None if inner is None else (prefix + inner[0], inner[1])


def _map_type(text: str, at: int, depth: int) -> tuple[str, int] | None:
    """A map type whose key starts at ``at`` (after ``map[``)."""
    key = _type(text, at, depth)
    close = None if key is None else _SPACE.match(text, key[1])
    if key is None or close is None or not text.startswith("]", close.end()):
        return None
    return _prefixed(f"map[{key[0]}]", _type(text, close.end() + 1, depth))


def _split(text: str) -> list[str]:
    """``text`` split at its commas outside brackets, braces and parentheses."""
    parts, depth, last = [], 0, 0
    for index, char in enumerate(text):
        depth += (char in "([{") - (char in ")]}")
        if char == "," and depth == 0:
            parts.append(text[last:index])
            last = index + 1
    return [*parts, text[last:]]


def programs(code: str, test: str, setup: str) -> Sides:
    """The program's side and the test's (`program`, `tester`). Raises `Refused`, or
    `ItemInvalid` for a test of no shape it runs."""
    exported = signatures(code, test, setup)
    sides = Sides(program(code, setup, exported), *tester(code, setup, test, exported))
    if not setup.strip():
        return sides
    # its own file, which Go parses apart from the program's: the setup's lines are its
    # last (a package clause may come first)
    last = sides.program.files[SETUP].count("\n") + 1
    place = SetupPlace(range(last - setup.count("\n"), last + 1), SETUP)
    return sides._replace(setup_place=place)


def program(code: str, setup: str, exported: list[Signature]) -> Program:
    """The program's side: ``code`` in package ``main`` (its own ``main`` renamed), a
    function serving each ``exported`` one and a ``main`` serving the calls."""
    code = _unused_imports_dropped(identifiers.own_main_renamed(code, go_source.masked(code)))
    serving = "".join(_serving(s) for s in exported)
    table = f"package main\n\nvar referee_calls = []referee_serving{{\n{serving}}}\n\n"
    table += "func main() { referee_serve(referee_calls) }\n"
    files = {HARNESS: _harness(), SERVING: table, **_setup(setup)}
    return Program(language="go", source=go_source.as_command(code), files=files)


def tester(code: str, setup: str, test: str, exported: list[Signature]) -> tuple[Program, range]:
    """The test's side (and the lines of its source that hold the test): the test's imports
    and those of the program's standard ones it uses, a stub for every ``exported``
    function, then ``test``: with its ``main`` run by ``referee_run_test``, or, for `go
    test`'s shape (MultiPL-E's: ``func TestX(t *testing.T)`` and no ``main``), built by ``go
    test`` with a ``TestMain`` whose status is the verdict (``referee_run_tests``). Raises
    `ItemInvalid` for a test of neither shape."""
    own_imports, body = _leading_imports(test)
    body = _exits_rewritten(body)
    renamed, count = _MAIN.subn(f"func {TEST_MAIN}()", body, count=1)
    language, tail = "go", f"func main() {{ referee_run_test({TEST_MAIN}) }}\n"
    if count == 0:
        if _TEST_FUNC.search(go_source.masked(body)) is None:
            raise ItemInvalid(
                "invalid_reference",
                "reference.test: no `func main()` found, nor a `func TestX(t *testing.T)`",
            )
        own_imports.append(("", "testing"))
        language, tail = "go_test", "func TestMain(m *testing.M) { referee_run_tests(m.Run) }\n"
        renamed = _guarded(renamed)
    shadow = go_source.masked(f"{body}\n{tail}")
    imports = _imports_used([*own_imports, *_std_imports(code)], shadow)
    stubs = "".join(_stub(index, s) for index, s in enumerate(exported))
    above = f"package main\n\n{imports}{stubs}\n"
    files = {HARNESS: _harness(), **_setup(setup)}
    built = Program(language=language, source=f"{above}{renamed}\n\n{tail}", files=files)
    return built, lines_after(above, renamed)


def _guarded(test: str) -> str:
    """``test`` with every function taking a ``*testing.T`` (a test, a subtest's
    closure) recovering its own panic as that test's failure: under ``testing`` a panic
    in a test's goroutine ends the process without a verdict (a test indexing a short
    slice the program returned was the harness's error, never the program's 0)."""
    shadow = go_source.masked(test)
    parts, last = [], 0
    for found in _TESTING_FUNC.finditer(shadow):
        parts += [test[last : found.end()], f" defer referee_guard({found.group(1)});"]
        last = found.end()
    return "".join([*parts, test[last:]])


def _serving(signature: Signature) -> str:
    """The program's side of one function: read the arguments, call, write the reply.
    Every name it declares is ``referee_``'s (and none the harness's package-level
    ones): a program function named ``in`` or ``a0`` is called, not shadowed."""
    lines = []
    for i, param in enumerate(signature.params):
        lines += [
            f"var referee_a{i} {_value_type(param)}",
            f"referee_arg(referee_args, &referee_a{i})",
        ]
    lines.append("referee_done(referee_args)")
    args = ", ".join(
        f"referee_a{i}..." if p.startswith("...") else f"referee_a{i}"
        for i, p in enumerate(signature.params)
    )
    results = ", ".join(f"referee_r{i}" for i in range(len(signature.results)))
    call = f"{signature.name}({args})"
    lines.append(f"{results} := {call}" if results else call)
    lines.append("referee_reply.byte1(0)")
    lines += [
        f"referee_result(referee_reply, &referee_r{i})" for i in range(len(signature.results))
    ]
    lines += [
        f"referee_result(referee_reply, &referee_a{i})"
        for i in range(len(signature.params))
        if signature.goes_back(i)
    ]
    body = "".join(f"\t\t{line}\n" for line in lines)
    head = "\tfunc(referee_args *referee_reader, referee_reply *referee_writer) {\n"
    return f"{head}{body}\t}},\n"


def _stub(index: int, signature: Signature) -> str:
    """The test's side of one function: a function of the program's name and signature
    that calls it in the program's sandbox."""
    params = ", ".join(f"a{i} {t}" for i, t in enumerate(signature.params))
    results = ", ".join(signature.results)
    if len(signature.results) > 1:
        results = f"({results})"
    lines = [f'c := referee_begin({index}, "{signature.name}")']
    lines += [f"c.put(&a{i})" for i in range(len(signature.params))]
    lines.append("c.exchange()")
    for i, result in enumerate(signature.results):
        lines += [f"var r{i} {result}", f"c.get(&r{i})"]
    lines += [f"c.back(&a{i})" for i in range(len(signature.params)) if signature.goes_back(i)]
    lines.append("c.finish()")
    if signature.results:
        lines.append("return " + ", ".join(f"r{i}" for i in range(len(signature.results))))
    body = "".join(f"\t{line}\n" for line in lines)
    return f"func {signature.name}({params}) {results} {{\n{body}}}\n\n"


def _value_type(param: str) -> str:
    """The type of a variable holding argument ``param`` (a variadic one's slice)."""
    return "[]" + param[3:] if param.startswith("...") else param


def _leading_imports(test: str) -> tuple[list[tuple[str, str]], str]:
    """The import declarations a test begins with (after a package clause, dropped), and
    the rest of it, on the lines it had."""
    shadow = go_source.masked(test)
    package = _PACKAGE.match(shadow)
    at = package.end() if package else 0
    specs: list[tuple[str, str]] = []
    while True:
        space = _SPACE.match(shadow, at)
        start = space.end() if space else at
        found = _IMPORT.match(shadow, start)
        if found is None:
            break
        end = _import_end(shadow, test, found.end())
        specs += _specs(test[found.end() : end])
        at = end
    return specs, "\n" * test[:at].count("\n") + test[at:]  # the test's lines kept


def _import_end(shadow: str, text: str, at: int) -> int:
    """Where the import declaration whose keyword ends at ``at`` ends (``shadow`` has the
    path literals blanked; ``text`` has them)."""
    space = _SPACE.match(text, at)
    at = space.end() if space else at
    if shadow.startswith("(", at):
        return identifiers.closing(shadow, at) + 1
    line = shadow.find("\n", at)
    return len(shadow) if line < 0 else line


def _specs(text: str) -> list[tuple[str, str]]:
    """(name, path) for each import spec in ``text`` (the name as written, else "")."""
    return [(name or "", path[1:-1]) for name, path in _IMPORT_SPEC.findall(text)]


def _std_imports(code: str) -> list[tuple[str, str]]:
    """The program's imports of the standard library (the test was written after them),
    under their own names: a blank or dot import, or one renamed, is the program's own
    (``import fmt "log"`` would give the test's ``fmt.Println`` another package's)."""
    shadow = go_source.masked(code)
    depths = identifiers.brace_depths(shadow)
    specs: list[tuple[str, str]] = []
    for found in _IMPORT.finditer(shadow):
        if depths[found.start()] == 0:
            end = _import_end(shadow, code, found.end())
            specs += _specs(code[found.end() : end])
    return [
        ("", path)
        for name, path in specs
        if name in ("", path.rsplit("/", 1)[-1])
        and "." not in path.split("/")[0]
        and path not in ("C", "")
    ]


def _unused_imports_dropped(code: str) -> str:
    """``code`` without the import specs whose names it never uses: a prompt written for
    the test appended to it (MultiPL-E's imports ``testing``) does not build alone
    otherwise (Go refuses an unused import)."""
    shadow = go_source.masked(code)
    depths = identifiers.brace_depths(shadow)
    drops: list[tuple[int, int]] = []
    for found in _IMPORT.finditer(shadow):
        if depths[found.start()] != 0:
            continue
        end = _import_end(shadow, code, found.end())
        grouped = code[found.end() : end].lstrip().startswith("(")
        for spec in _IMPORT_SPEC.finditer(code, found.end(), end):
            name, path = spec.group(1) or "", spec.group(2)[1:-1]
            local = name or path.rsplit("/", 1)[-1]
            used = re.search(rf"(?<![\w.]){re.escape(local)}\s*\.", shadow)
            if local not in ("_", ".") and used is None:
                # a lone `import "x"` goes whole; a group keeps its parentheses
                drops.append(spec.span() if grouped else (found.start(), spec.end()))
    for start, stop in reversed(drops):
        code = code[:start] + code[stop:]
    return code


def _imports_used(specs: list[tuple[str, str]], shadow: str) -> str:
    """An import declaration of the ``specs`` whose names ``shadow`` uses (each name
    once, the first spec's); the test's blank and dot imports are kept."""
    lines: dict[str, str] = {}
    for name, path in specs:
        local = name or path.rsplit("/", 1)[-1]
        if local in lines:
            continue
        if local in ("_", ".") or re.search(rf"(?<![\w.]){re.escape(local)}\s*\.", shadow):
            lines[local] = f'\t{name} "{path}"\n' if name else f'\t"{path}"\n'
    return f"import (\n{''.join(lines.values())})\n\n" if lines else ""


def _exits_rewritten(test: str) -> str:
    """``test`` with its ``os.Exit`` and ``log.Fatal`` calls made the harness's, which
    give a verdict (the process would otherwise end without one)."""
    return identifiers.calls_replaced(test, go_source.masked(test), _EXIT, _exit_for)


def _exit_for(call: str) -> str:
    callee = call.rstrip("(").rstrip()
    return next(v for k, v in _EXITS.items() if re.fullmatch(k, callee)) + "("


def _harness() -> str:
    return (resources.files(__package__) / "boundary.go").read_text(encoding="utf-8")


def _setup(setup: str) -> dict[str, str]:
    """The reference's setup, a file of its own on both sides (its imports its own)."""
    return {SETUP: go_source.as_command(setup)} if setup.strip() else {}
