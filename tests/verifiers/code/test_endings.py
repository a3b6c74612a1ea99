"""How a linked test ends when its own code ends its process without a verdict (a Go
goroutine's panic on what the program returned, a test's ``_exit``, a signal): a failed
test, flagged ``no_verdict``, never a retryable error (a wrong answer that made the
tester crash would otherwise escape its 0 as an infrastructure failure)."""

from __future__ import annotations

import shutil

import pytest

from referee.sandbox import CaseOutcome, CaseStatus
from referee.verifiers import Status
from referee.verifiers.base import ItemError
from referee.verifiers.code import verdicts
from tests.verifiers.code.conftest import ScoreMany, code_item, fenced

GO_GOROUTINE = (
    "package main\n\nfunc main() {\n\tdone := make(chan bool)\n\tgo func() {\n"
    '\t\tif F(3)[1] != 2 {\n\t\t\tpanic("no")\n\t\t}\n\t\tdone <- true\n\t}()\n\t<-done\n}\n'
)

# (language, tool, program, right program, test, what the ending says)
ENDINGS = [
    (
        "python", "python3", "def f(x):\n    return [x]", "def f(x):\n    return [x, 2]",
        "import os\nif f(3) != [3, 2]:\n    os._exit(0)\n", "exit status 0",
    ),
    (
        "go", "go", "package main\n\nfunc F(x int) []int { return []int{x} }",
        "package main\n\nfunc F(x int) []int { return []int{x, 2} }", GO_GOROUTINE,
        "index out of range",
    ),
    (
        "c", "gcc", "int f(int x) { return x + 1; }", "int f(int x) { return x + 2; }",
        "#include <unistd.h>\nint main(void) { if (f(1) != 3) _exit(3); return 0; }",
        "exit status 3",
    ),
    (
        "cpp", "g++", "int f(int x) { return x + 1; }", "int f(int x) { return x + 2; }",
        "#include <unistd.h>\nint main() { if (f(1) != 3) _exit(3); return 0; }",
        "exit status 3",
    ),
    (  # a call in a namespace-scope initialisation, before main, ends the process
        "cpp", "g++", "#include <vector>\nstd::vector<int> f(int x) { return {x}; }",
        "#include <vector>\nstd::vector<int> f(int x) { return {x, 0, 0, 1}; }",
        "#include <vector>\nstatic int r = f(1).at(3);\nint main() { return r == 1 ? 0 : 1; }",
        "out_of_range",
    ),
    (
        "javascript", "node", "function f(x) { return x + 1; }",
        "function f(x) { return x + 2; }",
        'if (f(1) !== 3) process.kill(process.pid, "SIGKILL");', "killed by signal 9",
    ),
    (
        "java", "javac", "class Solution { static int f(int x) { return x + 1; } }",
        "class Solution { static int f(int x) { return x + 2; } }",
        "public class Main { public static void main(String[] a) {\n"
        "  if (Solution.f(1) != 3) Runtime.getRuntime().halt(5); } }",
        "exit status 5",
    ),
    (
        "rust", "rustc", "fn f(x: i32) -> i32 { x + 1 }", "fn f(x: i32) -> i32 { x + 2 }",
        "fn main() { if f(1) != 3 { std::process::abort(); } }", "killed by signal 6",
    ),
    (
        "bash", "bash", "f() { echo $(( $1 + 1 )); }", "f() { echo $(( $1 + 2 )); }",
        '[ "$(f 1)" = 3 ] || kill -9 $$', "killed by signal 9",
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("language", "tool", "wrong", "right", "test", "ending"),
    ENDINGS,
    ids=[f"{e[0]}-{i}" for i, e in enumerate(ENDINGS)],
)
def test_a_test_ending_its_own_process_fails_the_program(
    score_many: ScoreMany,
    language: str,
    tool: str,
    wrong: str,
    right: str,
    test: str,
    ending: str,
) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    items = [
        code_item(fenced(code, language), {"test": test}, language=language)
        for code in (wrong, right)
    ]
    failed, passed = score_many(items)
    assert failed.status is Status.OK and failed.reward == 0.0, failed
    [case] = failed.details["cases"]
    assert case["flags"] == ["no_verdict"], case
    assert case["diff"].startswith("the test ended without a verdict: "), case
    assert ending in case["diff"], case
    assert passed.status is Status.OK and passed.reward == 1.0, passed


KEY = "k1"
STARTED = f'\n@@referee-verdict@@ {KEY} {{"started": true}}\n'


def _outcome(stdout: str, status: CaseStatus = CaseStatus.RUNTIME_ERROR) -> CaseOutcome:
    return CaseOutcome(status=status, exit_code=2, stdout=stdout, stderr="panic: x")


def test_a_harness_that_never_started_the_test_is_a_retryable_error() -> None:
    program = CaseOutcome(status=CaseStatus.OK)
    with pytest.raises(ItemError) as raised:
        verdicts.judge_linked(program, _outcome("output\n"), KEY)
    assert raised.value.code == "harness_failed"
    # the program cannot say the test started: only a line with the item's key counts
    forged = '\n@@referee-verdict@@ k2 {"started": true}\n'
    with pytest.raises(ItemError):
        verdicts.judge_linked(program, _outcome(forged), KEY)


def test_a_started_line_is_no_verdict_and_a_verdict_after_it_decides() -> None:
    program = CaseOutcome(status=CaseStatus.OK)
    ended = verdicts.judge_linked(program, _outcome(STARTED), KEY)
    assert (ended.status, ended.score, ended.flags) == ("wrong_answer", 0.0, ("no_verdict",))
    assert ended.diff == "the test ended without a verdict: exit status 2; panic: x"
    passing = STARTED + f'@@referee-verdict@@ {KEY} {{"passed": true}}\n'
    judged = verdicts.judge_linked(program, _outcome(passing, CaseStatus.OK), KEY)
    assert (judged.status, judged.score) == ("passed", 1.0)
