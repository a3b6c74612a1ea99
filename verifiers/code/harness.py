"""Wrap the candidate's code into what the sandbox runs, and build its cases (a `Plan`).

- stdio: the code is the program; each case's stdin is the test input.
- function (Python): a driver after the code reads the JSON argument list on stdin, calls
  ``fn_name`` (or ``Solution().fn_name``) and prints the result on a line starting with
  `RESULT_MARK`, as plain JSON; a result that is not plain data (a class instance, a
  subclass of a plain type) is reported as such instead (`UNSUPPORTED_MARK`), never
  converted. The host compares the values: the expected ones never enter the sandbox.
- assert (Python, JavaScript, TypeScript, bash, C, C++, Go, Rust): the test code runs
  in a *second* sandbox, linked to the program's by a channel (`verifiers.code.boundary`,
  `boundary.c`, `boundary.cpp`, `boundary.go`, `boundary.rust`): the program
  never holds the tests, their expected values or the assertion machinery, and only
  plain values come back.
- assert (Java): the test is appended to the program and runs in its process
  (`verifiers.code.inprocess` hardens that run and proves it completed).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from referee.sandbox import Case, Program
from referee.verifiers.base import ItemInvalid
from referee.verifiers.code import go_source, inprocess, java_source, js_source, kotlin_source
from referee.verifiers.code.boundary import assembly, c, cpp, go, java, rust
from referee.verifiers.code.proof import Proof
from referee.verifiers.code.suite import Suite

_SPLIT = frozenset({"c", "cpp", "go", "rust", "java"})
"""Compiled languages whose one assert test runs in a sandbox of its own
(`boundary.c`, `boundary.cpp`, `boundary.go`, `boundary.rust`)."""
RESULT_MARK = "@@referee-result@@ "
UNSUPPORTED_MARK = "@@referee-unsupported@@ "

_CALL_DRIVER = """

def __referee_call():
    import json as _json, sys as _sys
    _args = _json.loads(_sys.stdin.read())
    _fn = globals().get({name!r})
    if _fn is None and "Solution" in globals():
        _fn = getattr(globals()["Solution"](), {name!r})
    if _fn is None:
        raise NameError("no function or Solution method named " + {name!r})
    _out = _fn(*_args)
    _plain = (type(None), bool, int, float, str)
    def _check(value, depth):
        kind = type(value)
        if kind in _plain:
            return value
        if depth > 64:
            raise ValueError("nested deeper than 64")
        if kind in (list, tuple):
            return [_check(v, depth + 1) for v in value]
        if kind in (set, frozenset):
            items = [_check(v, depth + 1) for v in value]
            try:
                return sorted(items)
            except TypeError:
                return items
        if kind is dict:
            return {{_check(k, depth + 1) if type(k) is str else _json.dumps(_check(k, depth + 1)):
                    _check(v, depth + 1) for k, v in value.items()}}
        raise TypeError(kind)
    _sys.stdout.flush()
    try:
        _text = _json.dumps(_check(_out, 0))
    except (TypeError, ValueError):
        _kind = type(_out)
        _eq = any("__eq__" in vars(b) for b in _kind.__mro__ if b.__module__ != "builtins")
        _sys.stdout.write("\\n" + {unsupported!r} + _json.dumps(
            {{"type": getattr(_kind, "__qualname__", "?"), "custom_eq": _eq}}) + "\\n")
        return
    _sys.stdout.write("\\n" + {mark!r} + _text + "\\n")


__referee_call()
"""


@dataclass(frozen=True)
class Plan:
    """What to run: ``program`` on ``cases``; with a ``tester``, a linked run where the
    tester gets the cases and the program none (`sandbox.Sandbox.run_linked`).
    ``completion`` is what proves an in-process test ran to its end."""

    program: Program
    cases: list[Case]
    tester: Program | None = None
    completion: Proof | None = None
    verdict_key: str = ""
    """What the tester's verdict line carries (the program never sees it)."""
    tester_alone: bool = False
    """The tester holds nothing of the program's (its build failing is the reference's
    fault); C's and C++'s hold stubs made from the program's signatures."""


def build_plan(suite: Suite, code: str, language: str, proof: Proof) -> Plan:
    """The plan for ``suite`` and the candidate's ``code``; ``proof`` (random, per item)
    is what in-process tests show when they complete. Raises `declarations.Refused` for
    a C or C++ program whose functions the test cannot call from its own sandbox."""
    check_supported(suite, language)
    if suite.kind == "stdio":
        cases = [Case(stdin=c.stdin) for c in suite.cases]
        source = _as_command(code, language)
        return Plan(Program(language=language, source=source), cases)
    if language == "cpp":
        code, test = inprocess.finished(code, suite.test)
        exported = cpp.signatures(code, test, suite.setup)
        program = cpp.program(code, suite.setup, exported)
        tester = cpp.tester(code, suite.setup, test, exported)
        return Plan(program, [Case(stdin=f"{proof.key}\n")], tester=tester, verdict_key=proof.key)
    if language == "c":
        code, test = inprocess.finished(code, suite.test)
        functions = c.signatures(code, test, suite.setup)
        program = c.program(code, suite.setup, functions)
        tester = c.tester(code, suite.setup, test, functions)
        return Plan(program, [Case(stdin=f"{proof.key}\n")], tester=tester, verdict_key=proof.key)
    if language == "go":
        code, test = inprocess.finished(code, suite.test)
        exported_go = go.signatures(code, test, suite.setup)
        program = go.program(code, suite.setup, exported_go)
        tester = go.tester(code, suite.setup, test, exported_go)
        return Plan(program, [Case(stdin=f"{proof.key}\n")], tester=tester, verdict_key=proof.key)
    if language == "java":
        code, test = inprocess.finished(code, suite.test)
        members, host = java.exports(code, test, suite.setup)
        program = java.program(code, suite.setup, members, host)
        tester = java.tester(code, suite.setup, test, members, host)
        return Plan(program, [Case(stdin=f"{proof.key}\n")], tester=tester, verdict_key=proof.key)
    if language == "rust":
        code, test = inprocess.finished(code, suite.test)
        exported_rust = rust.signatures(code, test, suite.setup)
        program = rust.program(code, suite.setup, exported_rust)
        tester = rust.tester(code, suite.setup, test, exported_rust)
        return Plan(program, [Case(stdin=f"{proof.key}\n")], tester=tester, verdict_key=proof.key)
    if language not in assembly.LINKED_LANGUAGES:
        program = inprocess.program(language, suite.setup, code, suite.test, proof)
        return Plan(program, [inprocess.case(language, proof)], completion=proof)
    if suite.kind == "function":
        driver = _CALL_DRIVER.format(
            name=suite.fn_name, mark=RESULT_MARK, unsupported=UNSUPPORTED_MARK
        )
        prefix = f"{suite.setup}\n" if suite.setup else ""
        cases = [Case(stdin=c.stdin) for c in suite.cases]
        return Plan(Program(language=language, source=prefix + code + driver), cases)
    cases = [
        assembly.tester_case(c.stdin, suite.setup, proof.key, language, i)
        for i, c in enumerate(suite.cases)
    ]
    program = assembly.program(code, suite.setup, language)
    tests = tuple(c.stdin for c in suite.cases)
    tester = assembly.tester(language, suite.setup, tests)
    return Plan(program, cases, tester=tester, verdict_key=proof.key, tester_alone=True)


def _as_command(code: str, language: str) -> str:
    """``code`` as the program that runs on its own: Java without its ``package`` (it is
    run as a class of no package), Go in package ``main``, JavaScript as CommonJS,
    Kotlin with a top-level ``main``."""
    if language == "java":
        return java_source.unpackaged(code)
    if language == "go":
        return go_source.as_command(code)
    if language == "javascript":
        return js_source.commonjs(code)
    if language == "kotlin":
        return kotlin_source.with_top_level_main(code)
    return code


def check_supported(suite: Suite, language: str) -> None:
    """Raise `ItemInvalid` when ``suite``'s format cannot run in ``language``."""
    if suite.kind == "stdio" or language == "python3":
        return
    if suite.kind == "function":
        raise ItemInvalid(
            "invalid_reference",
            f"reference: function-call tests need params.language python3, not {language}; "
            f"for {language} give stdin/stdout tests or an assert-style test",
        )
    if language in assembly.LINKED_LANGUAGES:
        return
    if len(suite.cases) != 1 or not suite.test:
        raise ItemInvalid(
            "invalid_reference",
            "reference: test lists need params.language python3, javascript, typescript or "
            f"bash, not {language}; for {language} give one test appended to the program",
        )
    if language not in _SPLIT:  # C, C++, Go and Rust run their one test in a second sandbox
        inprocess.check_language(language, {*assembly.LINKED_LANGUAGES, *_SPLIT})


def returned_value(stdout: str) -> tuple[bool, object, str | None]:
    """What a function-call case returned: (found, value, unsupported type or None), from
    the last marked line."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARK):
            try:
                return True, json.loads(line[len(RESULT_MARK) :]), None
            # the program can print the mark itself: a line nested past what the reader
            # takes is no return value (the case fails), never the item's fault
            except (ValueError, RecursionError):
                return False, None, None
        if line.startswith(UNSUPPORTED_MARK):
            try:
                report = json.loads(line[len(UNSUPPORTED_MARK) :])
            except (ValueError, RecursionError):
                return False, None, None
            eq = "custom_eq" if isinstance(report, dict) and report.get("custom_eq") else ""
            return True, None, eq or "custom_type"
    return False, None, None
