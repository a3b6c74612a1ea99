"""The boundary between a C program and its assert test: two sandboxes, two binaries.

As for C++ (`boundary.cpp`): a test appended to the program and run in its process is
within reach of the program, which can read its caller's stack (where the test's
compound literals are), the heap and the code after its return address, where the
expected values are immediates. So the program is built alone with a ``main`` of ours
that serves calls (`boundary.h`'s ``referee_serve``), and the test is built alone with a
stub for every function it takes from the program, generated from the program's
signature, that sends the arguments to the program's sandbox and returns what comes back.

What crosses: integers, ``bool``, floating point (as a double), strings (``char *``,
``const char *``), arrays of numbers (``int *``, ``const double *``, ``int a[]``; NULL
too) and arrays of strings (``char **``, ``const char **``). A pointer argument goes
with as much as the test's object holds where the compiler knows its size at the call
(the stubs are always inlined), never a length the program's signature names, which
could make the test's side send memory past the test's array; one it cannot size is the
reference's error. A non-const one is written back within the same bounds (C's output
parameters: ``int *count``, ``char out[16]``), from the first character or item that
changed: a literal the test passed as ``char *`` to a function that leaves it alone is
never written. A string the function changed in an array of strings is a new string in
the test's array (the test's own strings may be literals). A
returned pointer into a string argument (``reverse(s)`` returning ``s``) is that
argument's buffer on the test's side. A returned array (of numbers, or of strings:
``char **``) crosses when the function has LeetCode's ``int *returnSize`` parameter: as
many items as it holds after the call, in an array the test's side allocates (the test
may ``free`` it, and each string); so do rows of numbers (``int **``) when it also has
``int **returnColumnSizes``: each row as long as the array the function leaves there
says, and that array the test's own. Any other returned array (its length is nowhere),
another pointer to pointers, a struct or a function pointer in a signature the test uses
is `Refused` (flag ``unsupported_signature``).

A stub must not stand in for a library function: stubs are ``static`` and come after
the test's, the program's and the C standard's headers (the test's include lines are
moved first), so one named like a function those headers declare does not compile
(``static declaration follows non-static declaration``): the test fails to build and
the program scores 0. (In the program's process, a ``strcmp`` of its own was the one the
test called: one finding every pair equal made every assertion hold.)
The names `boundary.h` itself links to (``read``, ``write``, ...) are refused before
that (flag ``shadows_library``): a stub of that name would be called in their place.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from enum import Enum
from importlib import resources

from referee.sandbox import Program
from referee.verifiers.code import native
from referee.verifiers.code.boundary import declarations
from referee.verifiers.code.boundary.declarations import ZEROED, Refused
from referee.verifiers.code.boundary.sides import SetupPlace, Sides, lines_after

HEADER = "referee_boundary.h"
_FIRST_LINE = f'#include "{HEADER}"\n'
"""The program's side's first line, before the reference's setup."""
TEST_MAIN = "referee_test_main"

TYPE_WORDS = frozenset(
    {
        "const", "signed", "unsigned", "short", "int", "long", "char", "bool", "_Bool",
        "float", "double", "size_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
        "uint16_t", "uint32_t", "uint64_t",
    }
)  # fmt: skip
"""The words a signature's types may hold."""

LINKED = frozenset(
    {
        "read", "write", "_exit", "realloc", "free", "getenv", "fflush", "__errno_location",
        "signal", "memcpy", "memmove", "memset", "strlen", "on_exit",
    }
)  # fmt: skip
"""The C library functions `boundary.h` calls (or GCC may call for its loops): a stub of
that name would be called in their place."""

_HEADERS = frozenset(
    {
        "assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h",
        "iso646.h", "limits.h", "locale.h", "math.h", "setjmp.h", "signal.h", "stdalign.h",
        "stdarg.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h",
        "stdnoreturn.h", "string.h", "strings.h", "tgmath.h", "time.h", "uchar.h", "wchar.h",
        "wctype.h",
    }
)  # fmt: skip
"""The standard headers a program's includes bring to the test's side (the test was
written after them); no other header of the system, which could define a macro the
test would compare through."""
_INCLUDE = re.compile(r"(?m)^[ \t]*#[ \t]*include[ \t]*<([^>\n]+)>")
_TYPE_TEXT = re.compile(r"[\w\s*]*")
_UNSUPPORTED = declarations.UNSUPPORTED
_ARRAY_PARAMETER = re.compile(r"\A([^\[\]]*?)\s*\b[A-Za-z_]\w*\s*\[[^\[\]]*\]\s*\Z")
"""A parameter declared as an array of one dimension (its name, then ``[]``, ``[10]``,
``[MAX]``: C ignores the size)."""
_UNSIGNED = frozenset({"unsigned", "size_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t"})
_BASE_HEADERS = (
    "assert.h", "ctype.h", "errno.h", "fenv.h", "float.h", "inttypes.h", "limits.h",
    "locale.h", "math.h", "setjmp.h", "signal.h", "stdarg.h", "stdbool.h", "stddef.h",
    "stdint.h", "stdio.h", "stdlib.h", "string.h", "time.h", "wchar.h", "wctype.h",
)  # fmt: skip
"""What the test's side includes after the test's and the program's headers: the C
standard's (but those that define macros a test's own names could meet: ``iso646.h``'s
``and``, ``complex.h``'s ``I``, ``tgmath.h``'s). Their functions' names are the C
library's (C11 7.1.3 reserves them): a stub of such a name, after their declarations,
does not compile."""


class Kind(Enum):
    """How a value crosses (`boundary.h`'s codec)."""

    VOID = "void"
    BOOL = "bool"
    SIGNED = "signed"
    UNSIGNED = "unsigned"
    FLOAT = "float"
    STRING = "string"
    ARRAY = "array"
    COLUMNS = "columns"
    """LeetCode's ``int **returnColumnSizes``: where the function leaves the lengths of
    the rows it returns (`CType.columns_by`)."""


@dataclass(frozen=True)
class CType:
    """A parameter's or result's type: its text (made of `TYPE_WORDS` and at most one
    ``*``), how it crosses, and, for a string or an array, whether the function may
    write to it; an array's ``item`` is its items' type."""

    text: str
    kind: Kind
    written: bool = False
    item: CType | None = None
    counted_by: int | None = None
    """A returned array's: the parameter (LeetCode's ``int *returnSize``) whose first
    item, after the call, is its length."""
    columns_by: int | None = None
    """A returned array of rows': the parameter (``int **returnColumnSizes``, `Kind.COLUMNS`)
    through which the function leaves an array of the rows' lengths."""

    def local(self) -> str:
        """The type of a variable holding such a value (top-level ``const`` dropped)."""
        if self.kind is Kind.STRING:
            return "char *" if self.written else "const char *"
        if self.kind is Kind.COLUMNS:
            return "int **"
        if self.kind is Kind.ARRAY and self.item is not None:
            if self.item.kind is Kind.STRING:  # `char **` or `const char **`, as declared
                return "const char **" if "const" in self.text else "char **"
            return f"{self.item.local()} *"
        return " ".join(w for w in self.text.split() if w != "const")


@dataclass(frozen=True)
class Signature:
    """One function the program defines and the test uses."""

    name: str
    returns: CType
    params: tuple[CType, ...]


def signatures(code: str, test: str, setup: str = "") -> list[Signature]:
    """The functions ``test`` takes from ``code``, in source order. Raises `Refused` for
    one whose types cannot cross or that `boundary.h` links to."""
    found, aliases = declarations.used(code, test, setup)
    exported = list(dict.fromkeys(_signature(definition, aliases) for definition in found))
    for signature in exported:
        if signature.name in LINKED:
            message = f"{signature.name}: the test's side links to the C library's"
            raise Refused("shadows_library", message)
    return exported


def _signature(definition: declarations.Definition, aliases: dict[str, str]) -> Signature:
    name = definition.name
    params = []
    names = declarations.param_names(definition.params)
    for text, named in zip(declarations.params(definition.params, name), names, strict=False):
        pointer = _ARRAY_PARAMETER.sub(r"\1 *", text)  # `int a[]` is `int *a`
        resolved = declarations.resolved(pointer, aliases, TYPE_WORDS)
        param = _ctype(resolved, result=False) or _columns(resolved, named)
        if param is None:
            raise Refused(_UNSUPPORTED, f"{name}: a parameter of type {text!r}")
        params.append(param)
    given = declarations.SPECIFIERS.sub("", definition.returns.strip())
    resolved = declarations.resolved(given, aliases, TYPE_WORDS)
    returns = _ctype(resolved, result=True) or _counted(resolved, params, definition.params)
    if returns is None:
        raise Refused(_UNSUPPORTED, f"{name}: its return type {definition.returns.strip()!r}")
    return Signature(name, returns, tuple(params))


def _counted(text: str | None, params: list[CType], declared: str) -> CType | None:
    """A returned array whose length the function writes to its ``returnSize`` (an
    integer pointer: LeetCode's convention for C), or None."""
    array = _ctype(text, result=False) or _rows(text, params)
    if array is None or array.kind is not Kind.ARRAY:
        return None
    names = declarations.param_names(declared)
    for index, (name, size) in enumerate(zip(names, params, strict=False)):
        if name == "returnSize" and _is_count(size):
            return dataclasses.replace(array, counted_by=index)
    return None


def _columns(text: str | None, name: str) -> CType | None:
    """LeetCode's ``int **returnColumnSizes`` (`Kind.COLUMNS`), or None."""
    if name != "returnColumnSizes" or text is None or not _COLUMNS.fullmatch(text.strip()):
        return None
    return CType(text, Kind.COLUMNS, written=True)


def _rows(text: str | None, params: list[CType]) -> CType | None:
    """A returned array of rows of numbers (``int **``), when the function has LeetCode's
    ``returnColumnSizes`` for their lengths; None otherwise."""
    if text is None or text.count("*") != 2:
        return None
    columns = [i for i, param in enumerate(params) if param.kind is Kind.COLUMNS]
    row = _ctype(text[: text.rindex("*")].strip(), result=False)
    if not columns or row is None or row.kind is not Kind.ARRAY:
        return None
    return CType(text, Kind.ARRAY, written=True, item=row, columns_by=columns[0])


def _is_count(param: CType) -> bool:
    """Whether ``param`` points to an integer the function may write."""
    item = param.item
    return param.kind is Kind.ARRAY and param.written and item is not None and item.kind in _COUNTS


_COUNTS = (Kind.SIGNED, Kind.UNSIGNED)
_COLUMNS = re.compile(r"int\s*\*\s*\*")
_STRINGS = re.compile(r"(?:const\s*)?char\s*\*\s*\*")


def _string_array(text: str | None) -> CType | None:
    """An array of strings (``char **``, ``const char **``): its pointers are the
    function's to change (a string written back is a new one on the test's side)."""
    if text is None or not _STRINGS.fullmatch(text.strip()):
        return None
    return CType(text, Kind.ARRAY, written=True, item=CType("char *", Kind.STRING, written=True))


def _ctype(text: str | None, result: bool) -> CType | None:
    """How ``text`` crosses, or None when it cannot."""
    if text is None or not _TYPE_TEXT.fullmatch(text):
        return None
    if result and text == "void":
        return CType(text, Kind.VOID)
    words = declarations.WORD.findall(text)
    if not result and (strings := _string_array(text)) is not None:
        return strings
    if any(w not in TYPE_WORDS for w in words) or text.count("*") > 1:
        return None
    if "*" in text:
        pointee, after = text.split("*")
        named = declarations.WORD.findall(pointee)
        if set(after.split()) - {"const"}:
            return None
        if [w for w in named if w != "const"] == ["char"]:
            return CType(text, Kind.STRING, written="const" not in named)
        item = _ctype(pointee.strip(), result=False)
        if result or item is None:  # a returned array's length is nowhere
            return None
        return CType(text, Kind.ARRAY, written="const" not in named, item=item)
    plain = [w for w in words if w != "const"]
    if not plain:
        return None
    if plain in (["bool"], ["_Bool"]):
        return CType(text, Kind.BOOL)
    if {"float", "double"} & set(plain):
        return CType(text, Kind.FLOAT)
    return CType(text, Kind.UNSIGNED if _UNSIGNED & set(plain) else Kind.SIGNED)


def programs(code: str, test: str, setup: str) -> Sides:
    """The program's side and the test's (`program`, `tester`). Raises `Refused`."""
    exported = signatures(code, test, setup)
    place = SetupPlace(lines_after(_FIRST_LINE, setup)) if setup.strip() else None
    return Sides(program(code, setup, exported), *tester(code, setup, test, exported), place)


def program(code: str, setup: str, exported: list[Signature]) -> Program:
    """The program's side: `boundary.h` (before anything of the program's), ``setup``,
    ``code`` (its own ``main`` renamed), a function serving each ``exported`` function,
    written while the program's macros hold (its ``#define int long`` is in its
    signatures too), then, with those macros undone, a ``main`` serving the calls."""
    serving = "".join(_serving(index, s) for index, s in enumerate(exported))
    table = ", ".join(f"referee_serve_{i}" for i in range(len(exported))) or "0"
    # A line comment of ours: a block comment the setup left open runs on to the end,
    # where the compiler says where it began (`diagnostics.setup_parse_error`).
    source = (
        f"{_FIRST_LINE}{setup}\n{native.own_main_renamed(code)}\n"
        "// referee: the functions the test calls from its own sandbox\n"
        f"{serving}"
        f"{native.undefined(code)}\n"
        f"static const referee_serving referee_calls[] = {{{table}}};\n"
        f"int main(void) {{\n    return referee_serve(referee_calls, {len(exported)}u);\n}}\n"
    )
    return Program(language="c", source=source, files=_header())


def tester(code: str, setup: str, test: str, exported: list[Signature]) -> tuple[Program, range]:
    """The test's side (and the lines of its source that hold the test, its leading
    directives as blank lines): those directives and the test's includes, the program's standard
    includes, ``setup``, a ``static`` stub for every ``exported`` function, then ``test``
    with our ``assert`` and its ``main`` run by ``referee_run_test``, which prints the
    verdict."""
    lead, body = _prologue(test)
    includes = "".join(f"#include <{n}>\n" for n in dict.fromkeys(_INCLUDE.findall(body)))
    base = "".join(f"#include <{name}>\n" for name in _BASE_HEADERS)
    stubs = "".join(_stub(index, s) for index, s in enumerate(exported))
    header = f'#include "{HEADER}"\n'
    before = f"{lead}{includes}{_includes(code)}{base}{header}{setup}\n{stubs}{_ASSERTS}"
    # the leading directives' lines kept as blank ones: a compiler's line in the test is
    # the test's own line
    renamed = "\n" * lead.count("\n") + native.rename_main(body, TEST_MAIN)
    source = (
        f"{before}{renamed}\nint main(int argc, char **argv) {{\n"
        f"    return referee_run_test((int (*)(int, char **)){TEST_MAIN}, argc, argv);\n}}\n"
    )
    built = Program(language="c", source=source, files=_header(), build_flags=[ZEROED])
    return built, lines_after(before, renamed)


_ASSERTS = (
    "#undef assert\n"
    "#define assert(c) ((c) ? (void)0 : referee_assertion_failed(#c))\n"
    "void __assert_fail(const char *what, const char *file, unsigned int line,\n"
    "                   const char *function) {\n"
    "    (void)file; (void)line; (void)function;\n"
    "    referee_assertion_failed(what);\n}\n"
)
"""The test's ``assert`` (and glibc's, for a test that includes ``<assert.h>`` again)
prints the failing verdict."""

_RANGE = "an integer out of its type's range"


def _decode(kind: Kind, target: str, local: str, reader: str) -> str:
    """A statement reading a value of ``kind`` (not a string) into ``target``."""
    if kind is Kind.BOOL:
        return f"{target} = referee_get_bool({reader});"
    if kind is Kind.FLOAT:
        return f"{target} = ({local})referee_get_f64({reader});"
    wide, get = ("long long", "i64") if kind is Kind.SIGNED else ("unsigned long long", "u64")
    return (
        f"{{ {wide} w = referee_get_{get}({reader}); {target} = ({local})w;"
        f' if (({wide}){target} != w) referee_broken("{_RANGE}"); }}'
    )


def _encode(kind: Kind, value: str, writer: str) -> str:
    """A statement writing ``value`` of ``kind`` (not a string) to ``writer``."""
    put = {
        Kind.BOOL: f"referee_put_bool({writer}, {value})",
        Kind.SIGNED: f"referee_put_i64({writer}, (long long){value})",
        Kind.UNSIGNED: f"referee_put_u64({writer}, (unsigned long long){value})",
        Kind.FLOAT: f"referee_put_f64({writer}, (double){value})",
    }
    return f"{put[kind]};"


def _strings(signature: Signature) -> str:
    """The string arguments and their limits, as the two array arguments of
    ``referee_put_result`` and ``referee_get_result`` (0 and 0 for other parameters)."""
    params = signature.params
    if not params:
        return "0, 0, 0u"
    starts = ", ".join(
        f"(char *)referee_a{i}" if p.kind is Kind.STRING else "0" for i, p in enumerate(params)
    )
    limits = ", ".join(
        f"referee_l{i}" if p.kind is Kind.STRING else "0" for i, p in enumerate(params)
    )
    return f"(char *const[]){{{starts}}}, (const referee_size[]){{{limits}}}, {len(params)}u"


def _serving(index: int, signature: Signature) -> str:
    """The program's side of one function: decode, call, encode the reply."""
    lines = []
    for i, param in enumerate(signature.params):
        lines.append(f"{param.local()} referee_a{i};")
        if param.kind is Kind.STRING:
            lines.append(
                f"referee_size referee_l{i}; referee_a{i} ="
                f" referee_get_string(referee_in, &referee_l{i});"
            )
        elif param.kind is Kind.ARRAY:
            lines += _array_in(i, param)
        elif param.kind is Kind.COLUMNS:  # where the function leaves its rows' lengths
            lines.append(
                f"int *referee_w{i} = 0;"
                f" referee_a{i} = referee_get_bool(referee_in) ? &referee_w{i} : 0;"
            )
        else:
            lines.append(_decode(param.kind, f"referee_a{i}", param.local(), "referee_in"))
    lines.append('referee_done(referee_in, "a call with bytes left over");')
    args = ", ".join(f"referee_a{i}" for i in range(len(signature.params)))
    returns = signature.returns
    if returns.kind is Kind.VOID:
        lines += [f"{signature.name}({args});", "referee_returned(referee_out);"]
    else:
        called = f"{returns.local()} referee_result = {signature.name}({args});"
        lines += [called, "referee_returned(referee_out);"]
        if returns.kind is Kind.STRING:
            lines.append(f"referee_put_result(referee_out, referee_result, {_strings(signature)});")
        elif returns.kind is Kind.ARRAY:
            lines.append(_counted_out(returns))
        else:
            lines.append(_encode(returns.kind, "referee_result", "referee_out"))
    for i, param in enumerate(signature.params):
        if param.kind is Kind.STRING and param.written:
            lines.append(f"referee_put_back(referee_out, referee_a{i}, referee_l{i});")
        elif param.kind is Kind.ARRAY and param.written:
            lines.append(_array_out(i, param, "referee_out"))
    body = "".join(f"    {line}\n" for line in lines)
    params = "referee_reader *referee_in, referee_writer *referee_out"
    head = f"static void referee_serve_{index}({params})"
    return f"{head} {{\n{body}}}\n"


def _stub(index: int, signature: Signature) -> str:
    """The test's side of one function: a ``static`` function of the program's name and
    signature that calls it in the program's sandbox. Always inlined, so that the size of
    a buffer the test passes is known where it is declared (`referee_limit`)."""
    params = ", ".join(f"{p.text} referee_a{i}" for i, p in enumerate(signature.params)) or "void"
    name = signature.name
    lines = []
    for i, p in enumerate(signature.params):
        if p.kind is Kind.STRING:
            lines.append(
                f"referee_size referee_l{i} ="
                f" referee_limit(referee_a{i}, REFEREE_OBJECT_SIZE(referee_a{i}));"
            )
        elif p.kind is Kind.ARRAY:
            sized = (
                f'referee_items(REFEREE_OBJECT_SIZE(referee_a{i}), sizeof *referee_a{i}, "{name}")'
            )
            lines.append(f"referee_size referee_c{i} = referee_a{i} == 0 ? 0 : {sized};")
    lines += ["referee_call call;", f'referee_begin(&call, {index}u, "{name}");']
    for i, param in enumerate(signature.params):
        if param.kind is Kind.STRING:
            lines.append(f"referee_put_string(&call.out, referee_a{i}, referee_l{i});")
        elif param.kind is Kind.ARRAY:
            lines.append(_array_out(i, param, "&call.out"))
        elif param.kind is Kind.COLUMNS:
            lines.append(f"referee_put_bool(&call.out, referee_a{i} != 0);")
        else:
            lines.append(_encode(param.kind, f"referee_a{i}", "&call.out"))
    lines.append("referee_exchange(&call);")
    returns = signature.returns
    if returns.kind is Kind.STRING:
        found = f"referee_get_result(&call, {_strings(signature)})"
        lines.append(f"{returns.local()} result = {found};")
    elif returns.kind is Kind.ARRAY:
        lines += [f"{returns.local()} result = 0;", _counted_in(returns)]
    elif returns.kind is not Kind.VOID:
        lines.append(f"{returns.local()} result;")
        lines.append(_decode(returns.kind, "result", returns.local(), "&call.in"))
    for i, param in enumerate(signature.params):
        if param.kind is Kind.STRING and param.written:
            lines.append(f"referee_get_back(&call, referee_a{i}, referee_l{i});")
        elif param.kind is Kind.ARRAY and param.written:
            lines.append(_array_back(i, param))
    lines.append("referee_finish(&call);")
    if returns.kind is not Kind.VOID:
        lines.append("return result;")
    body = "".join(f"    {line}\n" for line in lines)
    inline = "static inline __attribute__((always_inline))"
    return f"{inline} {returns.text} {signature.name}({params}) {{\n{body}}}\n"


def _array_in(i: int, param: CType) -> list[str]:
    """The program's side of array argument ``i``: NULL, or its items in a new array."""
    assert param.item is not None
    items = _items_in(f"referee_a{i}", f"referee_c{i}", param.local(), param.item, "referee_in")
    return [f"referee_size referee_c{i} = 0; referee_a{i} = 0;", items]


def _array_out(i: int, param: CType, writer: str) -> str:
    """Array argument ``i`` (its ``referee_c{i}`` items) written to ``writer``: sent by the test,
    or sent back by the program."""
    assert param.item is not None
    return _items_out(f"referee_a{i}", f"referee_c{i}", param.item, writer)


def _array_back(i: int, param: CType) -> str:
    """The test's side of array argument ``i`` after the call: its items as the program's
    function left them, exactly as many as the test passed."""
    assert param.item is not None
    if param.item.kind is Kind.STRING:  # a string the function changed is a new one
        got = _item_get(param.item, "referee_t", "&call.in")
        item = (
            f"{{ char *referee_t = 0; {got} if (referee_same(referee_a{i}[referee_k], referee_t))"
            f" referee_libc_free(referee_t); else referee_a{i}[referee_k] = referee_t; }}"
        )
    else:
        item = _item_get(param.item, f"referee_a{i}[referee_k]", "&call.in")
    return (
        f'if (referee_get_bool(&call.in) != (referee_a{i} != 0)) referee_broken("{_OTHER_ARRAY}");'
        f" if (referee_a{i} != 0) {{ if (referee_get_count(&call.in) != referee_c{i})"
        f' referee_broken("{_OTHER_ARRAY}");'
        f" for (referee_size referee_k = 0; referee_k < referee_c{i}; ++referee_k) {item} }}"
    )


def _items_in(array: str, count: str, local: str, item: CType, reader: str) -> str:
    """A statement reading NULL, or a count (into ``count``) and as many items into a new
    array, from ``reader`` into ``array`` (of type ``local``)."""
    get = _item_get(item, f"{array}[referee_k]", reader)
    return (
        f"if (referee_get_bool({reader})) {{ {count} = referee_get_count({reader});"
        f" {array} = ({local})referee_array({count}, sizeof *{array});"
        f" for (referee_size referee_k = 0; referee_k < {count}; ++referee_k) {get} }}"
    )


def _items_out(array: str, count: str, item: CType, writer: str) -> str:
    """A statement writing ``array``: NULL, or ``count`` and its first ``count`` items."""
    put = _item_put(item, f"{array}[referee_k]", writer)
    return (
        f"referee_put_bool({writer}, {array} != 0); if ({array} != 0) {{"
        f" referee_put_u64({writer}, {count});"
        f" for (referee_size referee_k = 0; referee_k < {count}; ++referee_k) {put} }}"
    )


_OTHER_ARRAY = "an array written back of another length"


def _item_put(item: CType, value: str, writer: str) -> str:
    """A statement writing an array's item ``value`` (a number, or a string: NULL or its
    characters) to ``writer``."""
    if item.kind is Kind.STRING:
        return (
            f"{{ const char *referee_s = {value}; referee_put_bool({writer}, referee_s != 0);"
            f" if (referee_s != 0) referee_put_bytes({writer}, referee_s,"
            " referee_length(referee_s)); }"
        )
    return _encode(item.kind, value, writer)


def _item_get(item: CType, target: str, reader: str) -> str:
    """A statement reading an array's item from ``reader`` into ``target`` (a string
    into storage of its own)."""
    if item.kind is Kind.STRING:
        return (
            f"{{ referee_size referee_s = 0; {target} = referee_get_bool({reader}) ?"
            f" referee_get_bytes({reader}, &referee_s) : 0; }}"
        )
    return _decode(item.kind, target, item.local(), reader)


def _counted_out(returns: CType) -> str:
    """The program's side of a returned array: NULL, or as many of its items as its
    ``returnSize`` says after the call (a count the program got wrong reads its own
    memory, never the test's)."""
    assert returns.item is not None and returns.counted_by is not None
    k = returns.counted_by
    if returns.columns_by is not None:
        items = _rows_out(returns, returns.columns_by)
    else:
        items = _items_out("referee_result", "referee_n", returns.item, "referee_out")
    return (
        f"{{ referee_size referee_n ="
        f" referee_a{k} != 0 && referee_c{k} > 0 && referee_a{k}[0] > 0 ?"
        f" (referee_size)referee_a{k}[0] : 0; {items} }}"
    )


def _counted_in(returns: CType) -> str:
    """The test's side of a returned array: NULL, or its items in an array of the test's
    own, allocated like the program's (the test frees it)."""
    assert returns.item is not None
    if returns.columns_by is not None:
        return _rows_in(returns, returns.columns_by)
    items = _items_in("result", "referee_n", returns.local(), returns.item, "&call.in")
    return f"{{ referee_size referee_n = 0; {items} }}"


def _rows_out(returns: CType, j: int) -> str:
    """The program's side of returned rows (``referee_n`` of them): NULL, or each row with
    as many items as the function's ``returnColumnSizes`` array says (none for a row it
    left no length for), and whether it left that array at all."""
    assert returns.item is not None and returns.item.item is not None
    row = _items_out("referee_result[referee_r]", "referee_c", returns.item.item, "referee_out")
    return (
        "referee_put_bool(referee_out, referee_result != 0); if (referee_result != 0) {"
        f" int *referee_w = referee_a{j} != 0 ? *referee_a{j} : 0;"
        " referee_put_u64(referee_out, referee_n);"
        " referee_put_bool(referee_out, referee_w != 0);"
        " for (referee_size referee_r = 0; referee_r < referee_n; ++referee_r) {"
        " referee_size referee_c = referee_w != 0 && referee_w[referee_r] > 0 ?"
        f" (referee_size)referee_w[referee_r] : 0; {row} }} }}"
    )


def _rows_in(returns: CType, j: int) -> str:
    """The test's side of returned rows: NULL, or each row in an array of the test's own,
    and their lengths in one more, which the test's ``returnColumnSizes`` then points to
    (the test frees them all)."""
    assert returns.item is not None and returns.item.item is not None
    local = returns.item.local()
    row = _items_in("result[referee_r]", "referee_c", local, returns.item.item, "&call.in")
    return (
        "{ int *referee_w = 0; if (referee_get_bool(&call.in)) {"
        " referee_size referee_n = referee_get_count(&call.in);"
        f" result = ({returns.local()})referee_array(referee_n, sizeof *result);"
        " if (referee_get_bool(&call.in))"
        " referee_w = (int *)referee_array(referee_n, sizeof *referee_w);"
        " for (referee_size referee_r = 0; referee_r < referee_n; ++referee_r) {"
        f" referee_size referee_c = 0; {row}"
        " if (referee_w != 0) referee_w[referee_r] = (int)referee_c; } }"
        f" if (referee_a{j} != 0) *referee_a{j} = referee_w; }}"
    )


def _prologue(test: str) -> tuple[str, str]:
    """``test`` split after its leading lines of directives (continued ones whole), line
    comments and blanks: they go before the stubs (``#define _GNU_SOURCE`` too)."""
    lines = test.splitlines(keepends=True)
    taken, continued = 0, False
    for line in lines:
        stripped = line.strip()
        if not (continued or not stripped or stripped.startswith(("#", "//"))):
            break
        continued = stripped.startswith("#") or continued
        continued = continued and stripped.endswith("\\")
        taken += 1
    return "".join(lines[:taken]), "".join(lines[taken:])


def _header() -> dict[str, str]:
    return {HEADER: (resources.files(__package__) / "boundary.h").read_text(encoding="utf-8")}


def _includes(code: str) -> str:
    """The standard headers the program includes (the test was written after them)."""
    names = dict.fromkeys(n.strip() for n in _INCLUDE.findall(code))
    return "".join(f"#include <{n}>\n" for n in names if n in _HEADERS)
