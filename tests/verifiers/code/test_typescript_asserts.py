"""TypeScript assert tests run on JavaScript's boundary (`verifiers.code.boundary`): the
program transpiled by the language's build, the test by the tester; MultiPL-E's
HumanEval-TS shape, TypeScript's own syntax on both sides, and a test that does not
compile being the reference's fault."""

from __future__ import annotations

from typing import Any

import pytest

from referee.sandbox import CompileOutcome, CompileStatus, Program, RunReport
from referee.verifiers import Result, Status
from referee.verifiers.base import ItemInvalid, ItemTimeout
from referee.verifiers.code.boundary import assembly
from referee.verifiers.code.harness import Plan
from referee.verifiers.code.verifier import _failed_build
from tests.verifiers.code.conftest import ScoreMany, code_item, fenced

MULTIPL_E = (
    "declare var require: any;\nconst assert = require('node:assert');\n\n\n"
    "function test() {\n  let candidate = has_close_elements;\n"
    "  assert.deepEqual(candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3),true);\n"
    "  assert.deepEqual(candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05),false);\n}\n\ntest();\n"
)
CLOSE = (
    "//Check if in given array of numbers, are any two numbers closer to each other than\n"
    "// given threshold.\n"
    "function has_close_elements(numbers: number[], threshold: number): boolean {\n"
    "  for (let i = 0; i < numbers.length; i++)\n"
    "    for (let j = i + 1; j < numbers.length; j++)\n"
    "      if (Math.abs(numbers[i] - numbers[j]) < threshold) return true;\n"
    "  return false;\n}\n"
)
TYPED = (
    "interface Point { x: number; y: number }\ntype Pair = [number, number];\n"
    "enum Kind { Small, Large }\n"
    "export function kind(p: Point): Kind { return p.x + p.y > 10 ? Kind.Large : Kind.Small; }\n"
    "export const swap = <T,>(pair: [T, T]): [T, T] => [pair[1], pair[0]];\n"
    "class Counter { private n: number = 0; next(): number { return ++this.n; } }\n"
    "function counter(): number { return new Counter().next(); }\n"
)
TYPED_TEST = (
    "declare var require: any;\nconst assert = require('node:assert');\n"
    "const p: { x: number; y: number } = { x: 3, y: 9 };\n"
    "assert.equal(kind(p), 1);\n"
    "assert.deepEqual(swap<number>([1, 2]) as number[], [2, 1]);\n"
    "assert.equal(counter(), 1);\n"
)

# (program, reference, reward)
CASES: list[tuple[str, Any, float]] = [
    (CLOSE, {"test": MULTIPL_E}, 1.0),
    (CLOSE.replace("< threshold", "> threshold"), {"test": MULTIPL_E}, 0.0),
    (TYPED, {"test": TYPED_TEST}, 1.0),
    (TYPED.replace("> 10", "> 100"), {"test": TYPED_TEST}, 0.0),
    (  # test lists, as for JavaScript: each its own case
        "function add(a: number, b: number): number { return a + b; }",
        {"tests": ["require('node:assert').equal(add(1, 2), 3);", "if (add(2, 2) !== 5) throw 0;"]},
        0.5,
    ),
]


def _score(score_many: ScoreMany, code: str, reference: Any) -> Result:
    item = code_item(fenced(code, "typescript"), reference, language="typescript")
    return score_many([item])[0]


@pytest.mark.parametrize(("code", "reference", "reward"), CASES)
def test_typescript_assert_tests(
    score_many: ScoreMany, code: str, reference: Any, reward: float
) -> None:
    result = _score(score_many, code, reference)
    assert (result.status, result.reward) == (Status.OK, reward), result.details


def test_a_test_that_does_not_compile_is_the_references_fault(score_many: ScoreMany) -> None:
    """The tests' build holds nothing of the program's: its failure is never a 0."""
    result = _score(score_many, CLOSE, {"test": "let x: = 1;\n"})
    assert result.status is Status.INVALID and result.error is not None, result
    assert result.error.code == "invalid_reference"
    assert "the test does not compile" in result.error.message


def test_typescripts_own_words_are_no_program_names() -> None:
    """A type annotation names no value of the program's; some of its words (``enum``,
    ``interface``) could not even be the tests' parameters."""
    assert assembly.js_program_names(MULTIPL_E) == ["has_close_elements"]
    assert assembly.js_program_names("let p: Point = f(1 as number) as any;") == ["Point", "f"]


def _built(status: CompileStatus | None) -> CompileOutcome | None:
    return None if status is None else CompileOutcome(status=status, output="out")


OK, ERROR, LATE = CompileStatus.OK, CompileStatus.ERROR, CompileStatus.TIMEOUT

# (the tester holds nothing of the program's, the program's build, the tests', outcome)
BUILDS: list[tuple[bool, CompileStatus | None, CompileStatus | None, object]] = [
    (True, OK, ERROR, ItemInvalid),  # the reference's test does not compile
    (True, OK, LATE, ItemTimeout),  # the tests' build ran out of the item's time
    (True, ERROR, LATE, "the program does not compile"),  # the program's fault first
    (True, OK, OK, None),
    (False, OK, ERROR, "the test does not compile with the program's functions"),  # C, C++
    (False, OK, LATE, "the test does not compile with the program's functions"),
]


@pytest.mark.parametrize(("alone", "program", "tests", "outcome"), BUILDS)
def test_whose_failed_build_it_is(
    alone: bool, program: CompileStatus, tests: CompileStatus, outcome: object
) -> None:
    """A tests' build with nothing of the program's in it is never the program's 0."""
    report = RunReport(compile=_built(program), peer_compile=_built(tests))
    plan = Plan(Program(language="c", source=""), [], tester_alone=alone)
    if isinstance(outcome, type):
        with pytest.raises(outcome):
            _failed_build(report, plan)
    else:
        failed = _failed_build(report, plan)
        assert (failed[2] if failed else None) == outcome


ASYNC_CODE = "function g(x) { return x * 2; }"
ASYNC_TEST = (
    "const assert = require('assert');\n(async () => {\n  assert.strictEqual(g(2), 4);\n"
    "  await new Promise((r) => setTimeout(r, 10));\n  assert.strictEqual(g(3), {want});\n})();\n"
)


@pytest.mark.parametrize("language", ["javascript", "typescript"])
@pytest.mark.parametrize(("want", "reward"), [(6, 1.0), (7, 0.0)])
def test_an_async_test_is_judged_once_it_has_run(
    score_many: ScoreMany, language: str, want: int, reward: float
) -> None:
    """The verdict waits for the test's promises and callbacks: an assertion failing after
    an ``await`` was a retryable harness error (the verdict came first, then node ended
    on the unhandled rejection), never the program's 0."""
    item = code_item(
        f"```{language}\n{ASYNC_CODE}\n```",
        {"test": ASYNC_TEST.replace("{want}", str(want))},
        language=language,
    )
    [result] = score_many([item])
    assert (result.status, result.reward) == (Status.OK, reward), (result.error, result.details)
    if not reward:
        assert "6 !== 7" in result.details["cases"][0]["diff"]
