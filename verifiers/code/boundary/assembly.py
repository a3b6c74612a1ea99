"""Assemble the two sandboxed programs of an assert-test run, and read its verdict.

The candidate's code runs as module ``solution`` in one sandbox, served by `server`; the
reference's tests run in a second sandbox under `tester`, with the names they take from
the program (found here: for Python by reading the test's syntax tree, for JavaScript by
scanning its identifiers) bound to proxies. The shipped files are this package's own
modules, concatenated after `codec` (their ``from verifiers...`` import lines dropped),
and ``boundary.js`` for JavaScript: what is tested here is what runs there.
"""

from __future__ import annotations

import ast
import base64
import builtins
import json
import marshal
import re
import sys
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from referee.sandbox import Case, Program
from referee.verifiers import syntax_tree
from referee.verifiers.code import js_source

MODULE = "solution"
RUNTIME = "referee_boundary"
VERDICT_MARK = "@@referee-verdict@@ "


@dataclass(frozen=True)
class TestVerdict:
    """What the tester said: ``harness_error`` is the reference's problem, not the program's."""

    passed: bool
    message: str = ""
    flags: tuple[str, ...] = field(default=())
    harness_error: str = ""
    called: bool = True
    """Whether the test asked the program anything. Only Python's and JavaScript's
    testers say: their test's names are found from its own text, so a verdict reached
    without a call is the test's alone. A compiled tester's is not (it is built with the
    program's declarations: ``sizeof(f(1))`` reads one without a call), nor bash's (it
    knows the program's functions from the program)."""


@cache
def _compiled(*modules: str, tail: str = "", filename: str = "") -> str:
    """The shipped ``modules`` (and ``tail``) as a module that runs bytecode compiled here,
    once, when the interpreter that loads it reads the same bytecode (its cache tag is
    ours), and compiles the source otherwise. Compiling the ~25 KB of the boundary in
    every case cost 3.9 ms (tests' side) and 3.0 ms (program's side) of an item's ~36 ms;
    reading the bytecode costs ~0.6 ms. Nothing here is a request's: it is our code."""
    source = _shipped(*modules) + tail
    tag: str | None = getattr(sys.implementation, "cache_tag", None)  # None: no bytecode cache
    if tag is None:
        return source
    blob = base64.b64encode(marshal.dumps(compile(source, filename, "exec"))).decode()
    return (
        "import sys as _sys\n"
        f"if _sys.implementation.cache_tag == {tag!r}:\n"
        "    import base64 as _base64, marshal as _marshal\n"
        f"    exec(_marshal.loads(_base64.b64decode({blob!r})))\n"
        "else:\n"
        f"    exec(compile({source!r}, {filename!r}, 'exec'))\n"
    )


def _shipped(*modules: str) -> str:
    parts = []
    for module in modules:
        text = (resources.files(__package__) / f"{module}.py").read_text(encoding="utf-8")
        parts.append(_without_own_imports(text))
    return "\n\n".join(parts) + "\n"


def _without_own_imports(text: str) -> str:
    """``text`` without its imports of our own package (the shipped modules are pasted
    together; inside the sandbox there is no `referee` to import), however they wrap."""
    dropped = {
        line
        for node in syntax_tree.parse(text).body
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("referee.")
        for line in range(node.lineno, (node.end_lineno or node.lineno) + 1)
    }
    lines = text.splitlines()
    return "\n".join(line for number, line in enumerate(lines, 1) if number not in dropped)


LINKED_LANGUAGES = frozenset({"python3", "javascript", "typescript", "bash"})
"""Languages whose assert tests run in a second sandbox. TypeScript runs on JavaScript's
boundary: the program and the tests are transpiled by their builds (not type-checked, as
ts-node --transpile-only runs), the tests' once for every program given the same tests."""


def program(code: str, setup: str, language: str = "python3") -> Program:
    """The candidate's side for ``language`` (see `LINKED_LANGUAGES`)."""
    if language in ("javascript", "typescript"):
        return _js_program(code, setup, language)
    if language == "bash":
        here = '"$(dirname "$0")"'
        launcher = f". {here}/{RUNTIME}.sh\nreferee_serve {here}/{MODULE}.sh\n"
        files = {f"{MODULE}.sh": f"{setup}\n{code}\n", **_bash_files()}
        return Program(language="bash", source=launcher, files=files)
    return _python_program(code, setup)


def tester(language: str = "python3", setup: str = "", tests: tuple[str, ...] = ()) -> Program:
    """The tests' side: the same for every item of a language, but TypeScript's, which
    holds ``tests`` (each after ``setup``) as sources of its build (`ts_test_file`)."""
    if language in ("javascript", "typescript"):
        launcher = 'require("./referee_boundary.js").test();\n'
        files = _js_files(language)
        if language == "typescript":
            files |= {ts_test_file(i, ".ts"): f"{setup}\n{t}" for i, t in enumerate(tests)}
        return Program(language=language, source=launcher, files=files)
    if language == "bash":
        launcher = f'. "$(dirname "$0")/{RUNTIME}.sh"\nreferee_test\n'
        return Program(language=language, source=launcher, files=_bash_files())
    source = _compiled("codec", "tester", tail="\nmain()\n", filename="referee_tester.py")
    return Program(language="python3", source=source)


def tester_case(test: str, setup: str, key: str, language: str = "python3", index: int = 0) -> Case:
    """The case the tester reads: the verdict's ``key`` (`read_verdict`), which names to
    proxy, then the test code (TypeScript's: the transpiled file of test ``index``)."""
    if language in ("javascript", "typescript"):
        spec: dict[str, Any] = {"names": js_program_names(setup + "\n" + test), "key": key}
        if language == "typescript":
            spec["file"] = ts_test_file(index, ".js")
            return Case(stdin=json.dumps(spec) + "\n")
        return Case(stdin=json.dumps(spec) + "\n" + setup + "\n" + test)
    if language == "bash":  # the program names its own functions
        return Case(stdin=f"{key}\n{setup}\n{test}\n")
    names = program_names(test, setup)
    spec = {"names": names, "setup": setup, "nodes": node_classes(setup), "key": key}
    return Case(stdin=json.dumps(spec) + "\n" + test)


def ts_test_file(index: int, suffix: str) -> str:
    """The name of TypeScript test ``index`` in the tester's box (``.ts`` as given,
    ``.js`` as built)."""
    return f"referee_test_{index}{suffix}"


def node_classes(setup: str) -> list[str]:
    """The classes ``setup`` defines at its top level (LeetCode's ``ListNode``,
    ``TreeNode``): their objects cross the boundary by value (`codec.Nodes`)."""
    try:
        tree = syntax_tree.parse(setup)
    except SyntaxError:
        return []
    return sorted({node.name for node in tree.body if isinstance(node, ast.ClassDef)})


def _python_program(code: str, setup: str) -> Program:
    """The candidate's side: ``setup`` then ``code`` as module `MODULE`, served."""
    launcher = f"__import__({RUNTIME!r}).run({MODULE!r}, {node_classes(setup)!r})\n"
    runtime = _compiled("codec", "server", filename=f"{RUNTIME}.py")
    files = {f"{MODULE}.py": f"{setup}\n{code}\n", f"{RUNTIME}.py": runtime}
    return Program(language="python3", source=launcher, files=files)


def _bash_files() -> dict[str, str]:
    text = (resources.files(__package__) / "boundary.sh").read_text(encoding="utf-8")
    return {f"{RUNTIME}.sh": text}


def _js_files(language: str = "javascript") -> dict[str, str]:
    """The boundary's module; for TypeScript as a source of the build, whose outputs are
    all that stays in the box (it is JavaScript, which transpiles to itself)."""
    text = (resources.files(__package__) / "boundary.js").read_text(encoding="utf-8")
    return {f"referee_boundary.{'ts' if language == 'typescript' else 'js'}": text}


def _js_program(code: str, setup: str, language: str) -> Program:
    """The candidate's side: ``setup`` and ``code`` as module `MODULE`, its top-level
    names exported (TypeScript's ``export`` is the build's to transpile)."""
    if language == "javascript":
        code = js_source.commonjs(code)  # the module is loaded by require
    names = js_identifiers(code)
    exports = "".join(
        f'  try {{ if (typeof {n} !== "undefined") e[{json.dumps(n)}] = {n}; }} catch (_) {{}}\n'
        for n in names
    )
    epilogue = f";module.exports = (() => {{\n  const e = {{}};\n{exports}  return e;\n}})();\n"
    module = f"{setup}\n{code}\n{epilogue}"
    launcher = f'require("./referee_boundary.js").serve(require("./{MODULE}.js"));\n'
    suffix = ".ts" if language == "typescript" else ".js"
    files = {f"{MODULE}{suffix}": module, **_js_files(language)}
    return Program(language=language, source=launcher, files=files)


_JS_IDENTIFIER = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*")
_JS_DECLARED = re.compile(r"\b(?:function\*?|class|let|const|var)\s+([A-Za-z_$][\w$]*)")
_JS_RESERVED = frozenset(
    [
        "break",
        "case",
        "catch",
        "class",
        "const",
        "continue",
        "debugger",
        "default",
        "delete",
        "do",
        "else",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "function",
        "if",
        "import",
        "in",
        "instanceof",
        "let",
        "new",
        "null",
        "of",
        "return",
        "super",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "typeof",
        "var",
        "void",
        "while",
        "with",
        "yield",
        "async",
        "await",
        "static",
        "get",
        "set",
        "undefined",
        "NaN",
        "Infinity",
        "globalThis",
        "console",
        "require",
        "module",
        "exports",
        "process",
        "Buffer",
        "Object",
        "Array",
        "Math",
        "JSON",
        "Number",
        "String",
        "Boolean",
        "Symbol",
        "BigInt",
        "Map",
        "Set",
        "WeakMap",
        "WeakSet",
        "Promise",
        "Error",
        "TypeError",
        "RangeError",
        "ReferenceError",
        "SyntaxError",
        "EvalError",
        "URIError",
        "Date",
        "RegExp",
        "Reflect",
        "Proxy",
        "Intl",
        "parseInt",
        "parseFloat",
        "isNaN",
        "isFinite",
        "arguments",
        "eval",
        "setTimeout",
        "setInterval",
        "clearTimeout",
        "clearInterval",
        "structuredClone",
        "Int8Array",
        "Uint8Array",
        "Int16Array",
        "Uint16Array",
        "Int32Array",
        "Uint32Array",
        "Float32Array",
        "Float64Array",
        "BigInt64Array",
        "BigUint64Array",
        "ArrayBuffer",
        "DataView",
        "encodeURIComponent",
        "decodeURIComponent",
        "encodeURI",
        "decodeURI",
        # TypeScript's words (and the words strict code reserves): never a program's
        # value, and not a parameter name the tests' function may take
        "enum", "implements", "interface", "package", "private", "protected", "public",
        "declare", "type", "namespace", "abstract", "readonly", "keyof", "infer", "is",
        "as", "satisfies", "any", "number", "string", "boolean", "unknown", "never",
        "object", "symbol", "bigint", "asserts", "override", "unique", "global",
    ]
)  # fmt: skip


def js_identifiers(source: str) -> list[str]:
    """Every identifier in ``source`` but keywords and globals: the program side exports
    those among them that name something at its top level."""
    return sorted(set(_JS_IDENTIFIER.findall(js_source.LITERAL.sub(" ", source))) - _JS_RESERVED)


def js_program_names(source: str) -> list[str]:
    """The identifiers ``source`` uses but does not declare and that are not JavaScript
    globals: candidates for the program's top-level names (a crude lexical scan: a name
    the program lacks is simply absent on its side)."""
    text = js_source.LITERAL.sub(" ", source)
    used = set(_JS_IDENTIFIER.findall(text))
    declared = set(_JS_DECLARED.findall(text))
    return sorted(used - declared - _JS_RESERVED)


def program_names(test: str, setup: str = "") -> list[str]:
    """The names ``test`` (after ``setup``) reads but never binds and that are not
    builtins: the ones the program must provide. An unparsable test has none (it then
    fails in the tester with its own syntax error). Read once per (test, setup): the
    extraction and the tester's case both ask, for every rollout of a group."""
    return list(_program_names(test, setup))


@lru_cache(maxsize=256)
def _program_names(test: str, setup: str) -> tuple[str, ...]:
    loaded: set[str] = set()
    bound: set[str] = set()
    for source in (setup, test):
        try:
            tree = syntax_tree.parse(source)
        except SyntaxError:
            continue
        _collect(tree, loaded, bound)
    return tuple(sorted(loaded - bound - set(dir(builtins))))


def _collect(tree: ast.AST, loaded: set[str], bound: set[str]) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)


def read_verdict(stdout: str, key: str) -> TestVerdict | None:
    """The tester's verdict from its stdout (its last line marked with ``key``); None
    without one. The key is the host's, per item, and only the tester's harness holds
    it: a test that prints what the program returned and then exits prints a line the
    program wrote, which was the last marked line (a forged pass scored 1.0 in C,
    JavaScript and Python: ``forged_verdict``)."""
    mark = f"{VERDICT_MARK}{key} "
    for line in reversed(stdout.splitlines()):
        if line.startswith(mark) and line != f"{mark}{_STARTED}":
            try:
                data: dict[str, Any] = json.loads(line[len(mark) :])
            except ValueError:
                return None
            return TestVerdict(
                passed=data.get("passed") is True,
                message=str(data.get("message", "")),
                flags=tuple(str(f) for f in data.get("flags", ())),
                harness_error=str(data.get("harness_error", "")),
                called=data.get("called") is not False,
            )
    return None


def test_started(stdout: str, key: str) -> bool:
    """Whether the tester said the test's own code started (the line every harness
    writes before it runs the test): a tester that ends with no verdict after it ended
    in the test's code (a Go goroutine's panic on what the program returned, a test's
    ``os._exit``), not in the harness."""
    return f"{VERDICT_MARK}{key} {_STARTED}" in stdout.splitlines()


_STARTED = '{"started": true}'
