"""A test (Python, JavaScript, TypeScript; C, C++, Java, Go and Rust at the end) that
reaches its verdict without calling the program is the reference's
(`assembly.TestVerdict.called`): one that fails would score every answer 0 (a setup that
raises, a module that is not there, ``assert False``), one that passes in every case
would score any answer 1, none included. Both are ``invalid_reference``; a case that
passes alone beside cases that call the program is left out of the reward (it would
raise every answer's); a test that called the program keeps its verdict, however the
program ended."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from referee.verifiers import Status
from tests.verifiers.code.conftest import ScoreMany, code_item, fenced

PROGRAMS = {
    "python3": "def g(x):\n    return 5",
    "javascript": "function g(x) { return 5; }",
    "typescript": "function g(x: number): number { return 5; }",
    "bash": "g() { echo 5; }",
}
CALLS = {
    "python3": "assert g(1) == 5",
    "javascript": "if (g(1) !== 5) throw new Error('wrong');",
    "typescript": "if (g(1) !== 5) throw new Error('wrong');",
    "bash": '[ "$(g 1)" = 5 ]',
}
FAILS_ALONE = {
    "python3": "assert 1 == 2",
    "javascript": "throw new Error('always');",
    "typescript": "throw new Error('always');",
    "bash": "false",
}
PASSES_ALONE = {
    "python3": "assert True",
    "javascript": "const unused = 1;",
    "typescript": "const unused: number = 1;",
    "bash": "[ 1 -eq 1 ]",
}
MISSING_MODULE = {
    "python3": "import referee_no_such_module",
    "javascript": "const m = require('referee_no_such_module');",
    "typescript": "const m = require('referee_no_such_module');",
    "bash": ". ./referee_no_such_module || exit 1",  # its verdict names no module: see below
}
LANGUAGES = sorted(PROGRAMS)

# (row, reference for a language, expected message part or None for a reward of 1.0)
ROWS: list[tuple[str, Any, str | None]] = [
    ("a test that fails alone", lambda lang: {"tests": [FAILS_ALONE[lang]]}, "fails without"),
    (
        "a failing case beside calling ones",
        lambda lang: {"tests": [CALLS[lang], FAILS_ALONE[lang]]},
        "fails without",
    ),
    (
        "a setup that raises",
        lambda lang: {"tests": [CALLS[lang]], "setup": MISSING_MODULE[lang]},
        "referee_no_such_module",
    ),
    ("a test that passes alone", lambda lang: {"tests": [PASSES_ALONE[lang]]}, "no test calls"),
    (
        "only cases that pass alone",
        lambda lang: {"tests": [PASSES_ALONE[lang], PASSES_ALONE[lang]]},
        "no test calls",
    ),
    ("a test that calls", lambda lang: {"tests": [CALLS[lang]]}, None),
    (
        "a case that passes alone beside one that calls",
        lambda lang: {"tests": [PASSES_ALONE[lang], CALLS[lang]]},
        None,
    ),
]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("row", "reference", "said"), ROWS, ids=[r[0] for r in ROWS])
def test_a_verdict_reached_without_the_program_is_the_references(
    score_many: ScoreMany, language: str, row: str, reference: Any, said: str | None
) -> None:
    if language == "bash" and said == "referee_no_such_module":
        said = "fails without calling the program: the test exited with status 1"
    item = code_item(fenced(PROGRAMS[language], ""), reference(language), language=language)
    (result,) = score_many([item])
    if said is None:
        assert (result.status, result.reward) == (Status.OK, 1.0), result.error
        return
    assert result.status == Status.INVALID, (result.reward, result.details)
    assert result.error is not None and result.error.code == "invalid_reference"
    assert said in result.error.message and "reference.test" in result.error.message


# A program cannot make a test that calls it look uncalled: dying before the call, or
# defining nothing, is the program's 0.
DYING = {
    "python3": "import os\nos._exit(3)",
    "javascript": "process.exit(3);",
    "typescript": "process.exit(3);",
    "bash": "exit 3",
}
RAISING = {
    "python3": "raise SystemExit('bye')",
    "javascript": "throw new Error('bye');",
    "typescript": "throw new Error('bye');",
    "bash": "g() { exit 4; }",
}
EMPTY = {
    "python3": "x = 1",
    "javascript": "const x = 1;",
    "typescript": "const x: number = 1;",
    "bash": "x=1",
}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("programs", [DYING, RAISING, EMPTY], ids=["dies", "raises", "empty"])
def test_a_program_that_fails_a_calling_test_scores_zero(
    score_many: ScoreMany, language: str, programs: dict[str, str]
) -> None:
    item = code_item(
        fenced(programs[language], ""), {"tests": [CALLS[language]]}, language=language
    )
    (result,) = score_many([item])
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_case_that_passes_alone_is_not_in_the_reward(
    score_many: ScoreMany, language: str
) -> None:
    """Beside a case that calls the program, one that passes alone checks nothing: an
    answer that defines nothing scored 0.5 on the two."""
    reference = {"tests": [CALLS[language], PASSES_ALONE[language]]}
    empty, right = score_many(
        [
            code_item(fenced(EMPTY[language], ""), reference, language=language),
            code_item(fenced(PROGRAMS[language], ""), reference, language=language),
        ]
    )
    assert (empty.status, empty.reward) == (Status.OK, 0.0), empty.details
    assert (right.status, right.reward) == (Status.OK, 1.0), right.details
    for result in (empty, right):
        assert result.details["unexercised"] == 1 and result.details["total"] == 2


# The compiled languages' one test, built apart with stubs for the program's functions:
# their harnesses say whether a stub was called (`boundary.h`, `.hpp`, `.java`, `.go`, `.rs`).
COMPILED: dict[str, tuple[str, str, str]] = {  # program, tool, the test's lines around `{}`
    "c": ("int add(int a, int b) { return a + b; }", "gcc",
          "#include <assert.h>\nint main(void) {{ {} return 0; }}"),
    "cpp": ("int add(int a, int b) { return a + b; }", "g++",
            "#include <cassert>\nint main() {{ {} return 0; }}"),
    "java": ("class Solution { static int add(int a, int b) { return a + b; } }", "javac",
             "public class Main {{ public static void main(String[] args) {{ {} }} }}"),
    "go": ("package main\n\nfunc Add(a int, b int) int { return a + b }", "go",
           "package main\n\nfunc main() {{ {} }}"),
    "rust": ("fn add(a: i64, b: i64) -> i64 { a + b }", "rustc", "fn main() {{ {} }}"),
}  # fmt: skip
COMPILED_LINES: dict[str, dict[str, str]] = {
    "c": {"calls": "assert(add(1, 2) == 3);", "passes": "assert(1 == 1);",
          "fails": "assert(1 == 2);", "dead": "if (0) add(1, 2);",
          "crashes": "volatile int *p = 0; *p = 1;"},
    "cpp": {"calls": "assert(add(1, 2) == 3);", "passes": "assert(1 == 1);",
            "fails": "assert(1 == 2);", "dead": "if (false) add(1, 2);",
            "crashes": "volatile int *p = nullptr; *p = 1;"},
    "java": {"calls": "if (Solution.add(1, 2) != 3) throw new AssertionError();",
             "passes": "int x = 1;", "fails": "throw new AssertionError(\"always\");",
             "dead": "if (args.length > 99) Solution.add(1, 2);",
             "crashes": "Object o = null; o.hashCode();"},
    "go": {"calls": "if Add(1, 2) != 3 { panic(\"wrong\") }", "passes": "x := 1; _ = x",
           "fails": "panic(\"always\")", "dead": "if len(\"\") > 0 { Add(1, 2) }",
           "crashes": "var p *int; *p = 1"},
    "rust": {"calls": "assert_eq!(add(1, 2), 3);", "passes": "assert!(1 == 1);",
             "fails": "assert!(1 == 2);", "dead": "if std::env::args().count() > 99 { add(1, 2); }",
             "crashes": "let v: Vec<i64> = Vec::new(); let _ = v[3];"},
}  # fmt: skip
COMPILED_ROWS = [  # the test's line, expected message part or None for a reward of 1.0
    ("passes", "no test calls"),
    ("dead", "no test calls"),
    ("fails", "fails without"),
    ("crashes", "fails without"),
    ("calls", None),
]


@pytest.mark.parametrize("language", sorted(COMPILED))
@pytest.mark.parametrize(("line", "said"), COMPILED_ROWS, ids=[r[0] for r in COMPILED_ROWS])
def test_a_compiled_tests_verdict_reached_without_the_program_is_the_references(
    score_many: ScoreMany, language: str, line: str, said: str | None
) -> None:
    """A C test of ``assert(1 == 1);`` scored any program 1.0, none that builds excluded."""
    program, tool, shape = COMPILED[language]
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    test = shape.format(COMPILED_LINES[language][line])
    item = code_item(fenced(program, language), {"test": test}, language=language)
    (result,) = score_many([item])
    if said is None:
        assert (result.status, result.reward) == (Status.OK, 1.0), (result.error, result.details)
        return
    assert result.status == Status.INVALID, (result.reward, result.details)
    assert result.error is not None and result.error.code == "invalid_reference"
    assert said in result.error.message and "reference.test" in result.error.message
