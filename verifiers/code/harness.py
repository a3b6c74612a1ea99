"""Wrap the candidate's code into the program the sandbox runs, and build its cases.

- stdio: the code is the program; each case's stdin is the test input.
- function (Python): a driver after the code reads the JSON argument list on stdin, calls
  ``fn_name`` (or ``Solution().fn_name``) and prints the JSON result on a line starting
  with `RESULT_MARK`, so the candidate's own prints do not disturb the comparison.
- assert (Python): a driver after the code executes the case's stdin (the test snippet)
  in the program's globals, so one program serves every snippet; a failed assert is a
  non-zero exit. The first stdin line is a per-run random nonce that the driver prints
  after the tests ran, so a candidate that exits early with status 0 (``sys.exit(0)``,
  ``os._exit(0)``) does not pass. Other languages: the test is appended to the program
  (one case) and the exit status is the verdict.
"""

from __future__ import annotations

import json

from sandbox import Case, Program
from verifiers.base import ItemInvalid
from verifiers.code.suite import Suite

RESULT_MARK = "@@referee-result@@ "

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
    def _plain(value):
        if isinstance(value, (set, frozenset)):
            try:
                return sorted(value)
            except TypeError:
                return list(value)
        return repr(value)
    _sys.stdout.flush()
    _sys.stdout.write("\\n" + {mark!r} + _json.dumps(_out, default=_plain) + "\\n")


__referee_call()
"""

_EXEC_DRIVER = """

def __referee_exec():
    import sys as _sys
    _nonce = _sys.stdin.readline().strip()
    exec(compile(_sys.stdin.read(), "<test>", "exec"), globals())
    _sys.stdout.flush()
    _sys.stdout.write("\\n" + _nonce + "\\n")


__referee_exec()
"""


def build_program(suite: Suite, code: str, language: str, nonce: str) -> tuple[Program, list[Case]]:
    """The program and its cases for ``suite`` and the candidate's ``code``; ``nonce``
    (random, one line) marks a completed assert run (see `tests_completed`)."""
    check_supported(suite, language)
    if suite.kind == "stdio":
        return Program(language=language, source=code), [Case(stdin=c.stdin) for c in suite.cases]
    if language != "python3":
        source = f"{suite.setup}\n{code}\n{suite.test}\n"
        return Program(language=language, source=source), [Case()]
    prefix = f"{suite.setup}\n" if suite.setup else ""
    if suite.kind == "function":
        driver = _CALL_DRIVER.format(name=suite.fn_name, mark=RESULT_MARK)
        cases = [Case(stdin=c.stdin) for c in suite.cases]
    else:
        driver = _EXEC_DRIVER
        cases = [Case(stdin=f"{nonce}\n{c.stdin}") for c in suite.cases]
    return Program(language=language, source=prefix + code + driver), cases


def check_supported(suite: Suite, language: str) -> None:
    """Raise `ItemInvalid` when ``suite``'s format cannot run in ``language``."""
    if suite.kind == "stdio" or language == "python3":
        return
    if suite.kind == "function" or len(suite.cases) != 1 or not suite.test:
        raise ItemInvalid(
            "invalid_reference",
            f"reference: function-call tests and test lists need params.language python3, "
            f"not {language}; for {language} give one test appended to the program",
        )


def tests_completed(stdout: str, nonce: str) -> bool:
    """True when an assert run printed ``nonce`` as its last line (the tests finished)."""
    lines = stdout.rstrip("\n").rsplit("\n", 1)
    return lines[-1] == nonce


def returned_value(stdout: str) -> tuple[bool, object]:
    """The value a function-call case returned: (found, value) from the last marked line."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARK):
            try:
                return True, json.loads(line[len(RESULT_MARK) :])
            except ValueError:
                return False, None
    return False, None
