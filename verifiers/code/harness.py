"""Wrap the candidate's code into what the sandbox runs, and build its cases (a `Plan`).

- stdio: the code is the program; each case's stdin is the test input.
- function (Python): a driver after the code reads the JSON argument list on stdin, calls
  ``fn_name`` (or ``Solution().fn_name``) and prints the result on a line starting with
  `RESULT_MARK`, as plain JSON; a result that is not plain data (a class instance, a
  subclass of a plain type) is reported as such instead (`UNSUPPORTED_MARK`), never
  converted. The host compares the values: the expected ones never enter the sandbox.
- assert (every language that runs them): the test code runs in a *second* sandbox,
  linked to the program's by a channel (`verifiers.code.boundary`; for the compiled
  languages a test built apart, with stubs made from the program's declarations: C,
  C++, Go, Rust, Java): the program never holds the tests, their expected values or the
  assertion machinery, and only plain values come back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from referee.sandbox import Case, Program
from referee.verifiers.base import ItemInvalid
from referee.verifiers.code import go_source, java_source, js_source, kotlin_source, multipl_e
from referee.verifiers.code.boundary import assembly, c, cpp, go, java, rust
from referee.verifiers.code.boundary.sides import SetupPlace, Sides
from referee.verifiers.code.suite import Suite

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
    tester gets the cases and the program none (`sandbox.Sandbox.run_linked`)."""

    program: Program
    cases: list[Case]
    tester: Program | None = None
    verdict_key: str = ""
    """What the tester's verdict line carries (the program never sees it)."""
    tester_alone: bool = False
    """The tester holds nothing of the program's (its build failing is the reference's
    fault); the compiled languages' hold stubs made from the program's signatures."""
    test_lines: range | None = None
    """The lines of the tester's main source holding the test's own text, where the
    language's parse errors are the test's (`diagnostics`)."""
    setup_place: SetupPlace | None = None
    """Where the program's build holds the reference's setup, for the languages where its
    parse errors there are the setup's (`diagnostics.setup_parse_error`)."""


_SPLIT: dict[str, Callable[[str, str, str], Sides]] = {
    "c": c.programs,
    "cpp": cpp.programs,
    "go": go.programs,
    "java": java.programs,
    "rust": rust.programs,
}
"""Compiled languages whose one assert test is built apart from the program, with stubs
generated from the program's declarations, and run in a sandbox of its own: the
program's side and the test's from (code, test, setup)."""


def build_plan(suite: Suite, code: str, language: str, key: str) -> Plan:
    """The plan for ``suite`` and the candidate's ``code``; ``key`` (random, per item)
    is what a tester's verdict line carries. Raises `declarations.Refused` for a
    program whose functions the test cannot call from its own sandbox."""
    check_supported(suite, language)
    if suite.kind == "stdio":
        cases = [Case(stdin=c.stdin) for c in suite.cases]
        source = _as_command(code, language)
        return Plan(Program(language=language, source=source), cases)
    split = _SPLIT.get(language)
    if split is not None:
        sides = split(*multipl_e.finished(code, suite.test), suite.setup)
        cases = [Case(stdin=f"{key}\n")]
        return Plan(
            sides.program,
            cases,
            sides.tester,
            verdict_key=key,
            test_lines=sides.test_lines,
            setup_place=sides.setup_place,
        )
    if suite.kind == "function":
        driver = _CALL_DRIVER.format(
            name=suite.fn_name, mark=RESULT_MARK, unsupported=UNSUPPORTED_MARK
        )
        prefix = f"{suite.setup}\n" if suite.setup else ""
        cases = [Case(stdin=c.stdin) for c in suite.cases]
        return Plan(Program(language=language, source=prefix + code + driver), cases)
    cases = [
        assembly.tester_case(c.stdin, suite.setup, key, language, i)
        for i, c in enumerate(suite.cases)
    ]
    program = assembly.program(code, suite.setup, language)
    tests = tuple(c.stdin for c in suite.cases)
    tester = assembly.tester(language, suite.setup, tests)
    return Plan(program, cases, tester=tester, verdict_key=key, tester_alone=True)


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
    if language not in _SPLIT:
        supported = ", ".join(sorted({*assembly.LINKED_LANGUAGES, *_SPLIT}))
        raise ItemInvalid(
            "invalid_params",
            f"params.language: assert-style tests run for {supported}; "
            f"for {language} give stdin/stdout tests",
        )
    if len(suite.cases) != 1 or not suite.test:
        raise ItemInvalid(
            "invalid_reference",
            "reference: test lists need params.language python3, javascript, typescript or "
            f"bash, not {language}; for {language} give one test to run against the program",
        )


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
