"""Every test format through the real bwrap sandbox, table-driven."""

from __future__ import annotations

import json
from typing import Any

import pytest

from referee.verifiers import Status
from tests.verifiers.code.conftest import ScoreMany, code_item, fenced

SQUARE_STDIO = {"inputs": ["3\n", "-4\n", "0\n"], "outputs": ["9\n", "16\n", "0\n"]}
ADD_CALL = {
    "fn_name": "add",
    "inputs": ["1\n2", "[1]\n[2]", "0.1\n0.2"],
    "outputs": ["3", "[1, 2]", "0.3"],
}
HUMANEVAL_STYLE = {
    "test": "def check(candidate):\n    assert candidate(2) == 4\n    assert candidate(-3) == 9\n",
    "entry_point": "square",
}
MBPP_STYLE = {"tests": ["assert square(2) == 4", "assert square(3) == 9", "assert square(0) == 0"]}
CPP_SQUARE = '#include <iostream>\nint main(){long long x; std::cin>>x; std::cout<<x*x<<"\\n";}'
GO_SQUARE = 'package main\nimport "fmt"\nfunc main(){var x int; fmt.Scan(&x); fmt.Println(x*x)}'
CPP_TEST = {"test": "#include <cassert>\nint main(){ assert(square(3) == 9); return 0; }"}

# (name, response, reference, params, expected reward)
CASES: list[tuple[str, str, Any, dict[str, Any], float]] = [
    ("stdio ok", fenced("print(int(input())**2)"), SQUARE_STDIO, {}, 1.0),
    ("stdio abs bug", fenced("x=int(input())\nprint(x*abs(x))"), SQUARE_STDIO, {}, 2 / 3),
    ("stdio cpp", fenced(CPP_SQUARE, "cpp"), SQUARE_STDIO, {"language": "cpp"}, 1.0),
    (
        "stdio all",
        fenced("x=int(input())\nprint(x*abs(x))"),
        SQUARE_STDIO,
        {"aggregate": "all"},
        0.0,
    ),
    ("call fn", fenced("def add(a, b):\n    return a + b"), ADD_CALL, {}, 1.0),
    (
        "call fn prints too",
        fenced("def add(a, b):\n    print('debug')\n    return a + b"),
        ADD_CALL,
        {},
        1.0,
    ),
    (
        "call Solution",
        fenced("class Solution:\n    def add(self, a, b):\n        return a + b"),
        ADD_CALL,
        {},
        1.0,
    ),
    (
        "call wrong",
        fenced("def add(a, b):\n    return a + b if a != 1 else 0"),
        ADD_CALL,
        {},
        2 / 3,
    ),
    (
        "call args list (APPS)",
        fenced("def add(a, b):\n    return a * b"),
        {"fn_name": "add", "inputs": [[2, 2], [3, 4]], "outputs": [[4], [7]]},
        {"accept_wrapped_output": True},
        0.5,
    ),
    (
        "call tuple is list",
        fenced("def f():\n    return (1, 2)"),
        {"fn_name": "f", "inputs": [""], "outputs": ["[1, 2]"]},
        {},
        1.0,
    ),
    (
        "stdio as a JSON string (verl)",
        fenced("print(int(input())**2)"),
        json.dumps(SQUARE_STDIO),
        {},
        1.0,
    ),
    (
        "APPS wrapped outputs as a JSON string, wrong answer",
        fenced("def add(a, b):\n    return [a + b + 1]"),
        json.dumps({"fn_name": "add", "inputs": [[2, 2]], "outputs": [[4]]}),
        {"accept_wrapped_output": True},
        0.0,
    ),
    ("assert humaneval", fenced("def square(x):\n    return x * x"), HUMANEVAL_STYLE, {}, 1.0),
    (
        "assert humaneval wrong",
        fenced("def square(x):\n    return x * abs(x)"),
        HUMANEVAL_STYLE,
        {},
        0.0,
    ),
    (
        "assert mbpp",
        fenced("def square(x):\n    return x * x if x != 3 else 0"),
        MBPP_STYLE,
        {},
        2 / 3,
    ),
    (
        "assert cpp appended",
        fenced("int square(int x){return x*x;}", "cpp"),
        CPP_TEST,
        {"language": "cpp"},
        1.0,
    ),
    (
        "assert cpp wrong",
        fenced("int square(int x){return x+x;}", "cpp"),
        CPP_TEST,
        {"language": "cpp"},
        0.0,
    ),
    (
        "exit(0) before tests",
        fenced("import sys\nsys.exit(0)\ndef square(x):\n    return 0"),
        HUMANEVAL_STYLE,
        {},
        0.0,
    ),
    (  # a failure in a thread the test starts is the test's (by default only printed)
        "an assertion failing in a test's thread",
        fenced("def square(x):\n    return x + 1"),
        {
            "test": "import threading\ndef check(candidate):\n    def run():\n"
            "        assert candidate(3) == 9\n    t = threading.Thread(target=run)\n"
            "    t.start()\n    t.join()\n",
            "entry_point": "square",
        },
        {},
        0.0,
    ),
    (
        "os._exit(0) in the function",
        fenced("import os\ndef square(x):\n    os._exit(0)"),
        MBPP_STYLE,
        {},
        0.0,
    ),
    ("stdio cpp, language from the fence", fenced(CPP_SQUARE, "cpp"), SQUARE_STDIO, {}, 1.0),
    ("stdio, golang alias", fenced(GO_SQUARE, "golang"), SQUARE_STDIO, {"language": "golang"}, 1.0),
    (
        "stdio ruby, language from the fence",
        fenced("x = gets.to_i\nputs x*x", "ruby"),
        SQUARE_STDIO,
        {},
        1.0,
    ),
    (
        "stdio typescript",
        fenced(
            "const x: number = parseInt(require('fs').readFileSync(0, 'utf8'));\nconsole.log(x*x);",
            "ts",
        ),
        SQUARE_STDIO,
        {},
        1.0,
    ),
    ("function tests stay python", fenced(CPP_SQUARE, "cpp"), ADD_CALL, {}, 0.0),
    ("no code", "I don't know.", SQUARE_STDIO, {"language": "cpp"}, 0.0),
    ("compile error", fenced("int main( {", "cpp"), SQUARE_STDIO, {"language": "cpp"}, 0.0),
    ("syntax error", fenced("def (:"), SQUARE_STDIO, {}, 0.0),
]


@pytest.mark.parametrize(
    ("name", "response", "reference", "params", "reward"), CASES, ids=[c[0] for c in CASES]
)
def test_formats(
    score_many: ScoreMany,
    name: str,
    response: str,
    reference: Any,
    params: dict[str, Any],
    reward: float,
) -> None:
    (result,) = score_many([code_item(response, reference, **params)])
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(reward), result.details
    assert result.verifier == "code@1"


def test_details_carry_verdicts_and_first_diff(score_many: ScoreMany) -> None:
    (result,) = score_many([code_item(fenced("x=int(input())\nprint(x*abs(x))"), SQUARE_STDIO)])
    cases = result.details["cases"]
    assert [c["status"] for c in cases] == ["passed", "wrong_answer", "passed"]
    assert cases[1]["diff"] == "line 1: expected '16', got '-16'"
    assert all(c["time_s"] > 0 for c in cases)
    assert result.details["passed"] == 2 and result.details["total"] == 3


def test_compile_error_is_ok_with_zero_and_the_message(score_many: ScoreMany) -> None:
    (result,) = score_many([code_item(fenced("int main( {", "cpp"), SQUARE_STDIO, language="cpp")])
    assert result.status == Status.OK and result.reward == 0.0
    assert "error" in result.details["compile_error"]


def test_no_code_says_so(score_many: ScoreMany) -> None:
    response = "```java\nclass A{}\n```"
    (result,) = score_many([code_item(response, SQUARE_STDIO, language="python3")])
    assert result.reward == 0.0
    assert result.details["message"] == "no code found in the response"


CHECKER = """import sys
inp, exp, act = (open(p).read() for p in sys.argv[1:4])
want, got = float(exp), float(act or 'nan')
print(1.0 if abs(want - got) < 0.01 else (0.5 if abs(want - got) < 1 else 0.0))
"""


@pytest.mark.parametrize(
    ("program", "reward"),
    [
        ("print(float(input()) / 3)", 1.0),
        ("print(float(input()) / 3 + 0.5)", 0.5),
        ("print(7)", 0.0),
    ],
)
def test_special_judge_checker(score_many: ScoreMany, program: str, reward: float) -> None:
    ref = {"inputs": ["1\n", "2\n"], "outputs": ["0.333\n", "0.667\n"], "checker": CHECKER}
    (result,) = score_many([code_item(fenced(program), ref)])
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(reward)


def test_output_that_crashes_the_checker_fails_its_case_not_the_item(
    score_many: ScoreMany,
) -> None:
    """The checker's ``float()`` raises on ``abc``, yet it reads the expected output: the
    candidate's output broke it, so the case scores 0 (it was ``invalid``, the client's
    fault, which a response could cause at will)."""
    ref = {"inputs": ["1\n", "2\n"], "outputs": ["0.333\n", "0.667\n"], "checker": CHECKER}
    program = "x = int(input())\nprint('abc' if x == 2 else x / 3)"
    (result,) = score_many([code_item(fenced(program), ref)])
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(0.5)
    passed, crashed = result.details["cases"]
    assert passed["status"] == "passed"
    assert (crashed["status"], crashed["flags"]) == ("wrong_answer", ["checker_failed"])
    assert "ValueError" in crashed["diff"]


def test_ioi_subtasks_score_their_minimum(score_many: ScoreMany) -> None:
    ref = {
        "inputs": ["1\n", "2\n", "30\n", "40\n"],
        "outputs": ["1\n", "4\n", "900\n", "1600\n"],
        "subtasks": [{"cases": [0, 1], "weight": 40}, {"cases": [2, 3], "weight": 60}],
    }
    small_only = fenced("x=int(input())\nprint(x*x if x < 10 else 0)")
    (result,) = score_many([code_item(small_only, ref, aggregate="subtasks")])
    assert result.reward == pytest.approx(0.4)
    assert result.details["subtasks"] == [1.0, 0.0]


@pytest.mark.parametrize("language", ["python3", "cpp"])
def test_early_exit_skips_the_rest(score_many: ScoreMany, language: str) -> None:
    n = 12
    ref = {
        "inputs": [f"{i}\n" for i in range(n)],
        "outputs": ["0\n"] + [f"{i}\n" for i in range(1, n)],
    }
    code = {
        "python3": "print(int(input()) if False else 1)",
        "cpp": '#include <cstdio>\nint main(){puts("1");}',
    }
    (result,) = score_many(
        [code_item(fenced(code[language], language), ref, language=language, early_exit=True)]
    )
    statuses = [c["status"] for c in result.details["cases"]]
    assert statuses[0] == "wrong_answer"
    assert "skipped" in statuses
    assert result.reward == pytest.approx(statuses.count("passed") / n)


USAGE_AFTER = (
    "```python\nclass Solution:\n    def add(self, a, b):\n        return a + b\n"
    "def add(a, b):\n    return a + b\n```\n"
    "Example:\n```python\nprint(add(1, 2))\nprint(Solution().add(2, 2))\n```\n"
)


@pytest.mark.parametrize(
    "reference",
    [
        {"tests": ["assert add(1, 2) == 3"]},
        {"test": "def check(candidate):\n    assert candidate(1, 2) == 3\n", "entry_point": "add"},
        {"fn_name": "add", "inputs": ["2\n2"], "outputs": ["4"]},
        {
            "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n",
            "entry_point": "Solution().add",
        },
    ],
    ids=["assert", "humaneval", "function", "leetcode"],
)
def test_a_usage_example_after_the_answer_is_not_the_program(
    score_many: ScoreMany, reference: dict[str, Any]
) -> None:
    """The last block was the program: a right answer followed by its usage scored 0."""
    [result] = score_many([code_item(USAGE_AFTER, reference, language="python3")])
    assert (result.status, result.reward) == (Status.OK, 1.0), result.details
