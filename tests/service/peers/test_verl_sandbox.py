"""verl's SandboxFusion client (its real code) against referee's ``/run_code``."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests

from tests.service.peers.conftest import verl_reward_score, verl_sandbox_utils

SQUARE = {"inputs": ["3\n", "-4\n", "0\n"], "outputs": ["9\n", "16\n", "0\n"]}


def check(
    url: str, code: str, tests: dict[str, Any] = SQUARE, language: str = "python", timeout: int = 5
) -> Any:
    utils = verl_sandbox_utils()
    results, metadata = utils.check_correctness(
        f"{url}/run_code", tests, code, timeout=timeout, language=language
    )
    return results, metadata


# (name, language, code, expected per-case results as verl classifies them)
CASES: list[tuple[str, str, str, list[Any]]] = [
    ("right", "python", "print(int(input())**2)", [True, True, True]),
    ("wrong on negatives", "python", "x=int(input())\nprint(x*abs(x))", [True, False, True]),
    ("runtime error", "python", "raise SystemExit(3)", [-2, -2, -2]),
    (
        "killed by a signal",
        "python",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
        [-2] * 3,
    ),
    ("syntax error", "python", "def (:", [-2, -2, -2]),
    (
        "cpp right",
        "cpp",
        "#include <iostream>\nint main(){long long x;std::cin>>x;std::cout<<x*x<<std::endl;}",
        [True, True, True],
    ),
    ("cpp compile error", "cpp", "int main( {", [-4, -4, -4]),
    (
        "java assert is on",
        "java",
        "public class Main { public static void main(String[] a) {"
        " java.util.Scanner s = new java.util.Scanner(System.in); long x = s.nextLong();"
        " assert x > 100; System.out.println(x*x); } }",
        [-2, -2, -2],
    ),
    # deaths by a signal on every path: the program's own alarm, abort, a segfault
    ("alarm", "python", "import signal, time\nsignal.alarm(1)\ntime.sleep(3)", [-2] * 3),
    ("cpp abort", "cpp", "#include <cstdlib>\nint main(){ abort(); }", [-2] * 3),
    ("segfault", "python", "import ctypes\nctypes.string_at(0)", [-2] * 3),
    ("output over the cap", "python", "print('x' * (3 << 20))", [-2] * 3),
    ("memory error", "python", "x = bytearray(8 << 30)", [-2] * 3),
    ("exits 0 early", "python", "import sys\nsys.exit(0)", [False] * 3),
    ("trailing space", "python", "x = int(input())\nprint(x * x, end=' \\n')", [False] * 3),
    (
        "stderr is not output",
        "python",
        "import sys\nx = int(input())\nprint('debug', file=sys.stderr)\nprint(x * x)",
        [True] * 3,
    ),
    (
        "sleeps within the limit",
        "python",
        "import time\ntime.sleep(2)\nx = int(input())\nprint(x * x)",
        [True] * 3,
    ),
    (
        "a child left running",
        "python",
        "import subprocess\nsubprocess.Popen(['sleep', '100'])\nx = int(input())\nprint(x * x)",
        [True] * 3,
    ),
    (
        "cpp threads",
        "cpp",
        "#include <iostream>\n#include <thread>\n#include <vector>\nint main(){ long long x;"
        " std::cin >> x; long long r[8]; std::vector<std::thread> t;"
        " for (int i = 0; i < 8; i++) t.emplace_back([&, i]{ r[i] = x * x; });"
        " for (auto &th : t) th.join(); std::cout << r[7] << std::endl; }",
        [True] * 3,
    ),
    (
        "go",
        "go",
        'package main\nimport "fmt"\nfunc main(){ var x int; fmt.Scan(&x); fmt.Println(x * x) }',
        [True] * 3,
    ),
    (
        "rust",
        "rust",
        "use std::io::*;\nfn main(){ let mut s = String::new(); stdin().read_line(&mut s).unwrap();"
        ' let x: i64 = s.trim().parse().unwrap(); println!("{}", x * x); }',
        [True] * 3,
    ),
    (
        "nodejs",
        "nodejs",
        "const x = parseInt(require('fs').readFileSync(0, 'utf8')); console.log(x * x)",
        [True] * 3,
    ),
    ("bash", "bash", "read x; echo $((x * x))", [True] * 3),
    ("ruby", "ruby", "x = gets.to_i; puts x * x", [True] * 3),
    ("php", "php", '<?php $x = intval(trim(fgets(STDIN))); echo $x * $x, "\\n";', [True] * 3),
]

FUNCTION_CASES: list[tuple[str, str, dict[str, Any], list[Any]]] = [
    (
        "function",
        "def sq(x):\n    return x * x",
        {"inputs": ["3", "-4"], "outputs": ["9", "16"]},
        [True, True],
    ),
    (
        "Solution method",
        "class Solution:\n    def sq(self, x):\n        return x * x",
        {"inputs": ["3"], "outputs": ["9"]},
        [True],
    ),
    (
        "wrong function",
        "def sq(x):\n    return x + x",
        {"inputs": ["3"], "outputs": ["9"]},
        [False],
    ),
]
"""verl's own call wrapper (``fn_name``): it reads JSON arguments and prints the result."""


@pytest.mark.parametrize(("name", "language", "code", "expected"), CASES, ids=[c[0] for c in CASES])
def test_check_correctness_classifies_as_sandbox_fusion_would(
    live_server: str, name: str, language: str, code: str, expected: list[Any]
) -> None:
    results, metadata = check(live_server, code, language=language)
    assert results == expected, metadata


def test_a_program_past_its_time_is_a_timeout(live_server: str) -> None:
    results, metadata = check(live_server, "while True: pass", timeout=1)
    assert results == [-3, -3, -3], metadata


@pytest.mark.parametrize(
    ("name", "code", "tests", "expected"), FUNCTION_CASES, ids=[c[0] for c in FUNCTION_CASES]
)
def test_function_calls_through_verls_wrapper(
    live_server: str, name: str, code: str, tests: dict[str, Any], expected: list[Any]
) -> None:
    results, metadata = check(live_server, code, {**tests, "fn_name": "sq"})
    assert results == expected, metadata


def test_call_sandbox_api_round_trip(live_server: str) -> None:
    utils = verl_sandbox_utils()
    body, error = utils.call_sandbox_api(
        f"{live_server}/run_code", "print(input()[::-1])", "abc", 5, 5, -1, "python"
    )
    assert error is None
    assert body["status"] == "Success"
    assert body["run_result"]["stdout"] == "cba\n"


def test_an_overloaded_server_answers_504_in_time_and_verl_retries(busy_server: str) -> None:
    """verl waits compile + run + 10 s and retries only a 504: a queued run must get its
    504 well before then, and verl's retry must then succeed."""
    utils = verl_sandbox_utils()
    hog = threading.Thread(
        target=utils.call_sandbox_api,
        args=(f"{busy_server}/run_code", "import time; time.sleep(4)", None, 5, 6, 256, "python"),
    )
    hog.start()
    time.sleep(0.5)  # the hog holds the only sandbox worker now
    start = time.monotonic()
    body, error = utils.call_sandbox_api(
        f"{busy_server}/run_code", "print('late')", None, 1, 1, 256, "python"
    )
    took = time.monotonic() - start
    hog.join()
    assert error is None, error
    assert body["status"] == "Success" and body["run_result"]["stdout"] == "late\n"
    assert took > 2.5, "answered without waiting for the hog: the 504 path was not exercised"


def test_verl_concurrency_gets_no_client_side_timeouts(busy_server: str) -> None:
    """verl's ``max_concurrent`` calls at once on one sandbox worker: every call ends with
    an answer (a result or verl's own give-up after 504s), never a client timeout."""
    utils = verl_sandbox_utils()
    with ThreadPoolExecutor(max_workers=12) as pool:
        calls = [
            pool.submit(
                utils.call_sandbox_api,
                f"{busy_server}/run_code",
                "import time; time.sleep(1); print('done')",
                None,
                1,
                3,
                256,
                "python",
            )
            for _ in range(12)
        ]
        answers = [c.result() for c in calls]
    errors = [error for _, error in answers if error is not None]
    assert all("504" in error for error in errors), errors  # never "Read timed out"
    assert any(error is None for _, error in answers)


def test_a_run_whose_client_gave_up_is_cancelled(busy_server: str) -> None:
    """verl's client times out and leaves: its run must not hold the only sandbox."""
    with pytest.raises(requests.exceptions.Timeout):
        requests.post(
            f"{busy_server}/run_code",
            json={"code": "import time; time.sleep(8)", "language": "python", "run_timeout": 9},
            timeout=1.0,
        )
    start = time.monotonic()
    answer = requests.post(
        f"{busy_server}/run_code",
        json={"code": "print(1)", "language": "python", "run_timeout": 2},
        timeout=10,
    )
    assert answer.status_code == 200 and answer.json()["status"] == "Success", answer.text
    assert time.monotonic() - start < 3.0


CODE_TESTS = [
    # (data source, completion, ground truth as verl stores it, expected score)
    (
        "codecontests",
        "```python\nprint(int(input()) ** 2)\n```",
        '{"inputs": ["3\\n", "4\\n"], "outputs": ["9\\n", "16\\n"]}',
        1.0,
    ),
    (
        "apps",
        "```python\nx = int(input())\nprint(x * 2)\n```",
        '{"inputs": ["3\\n", "2\\n"], "outputs": ["9\\n", "4\\n"]}',
        0.5,
    ),
    (
        "taco",
        "```python\ndef add(a, b):\n    return a + b\n```",
        '{"fn_name": "add", "inputs": ["1\\n2", "3\\n4"], "outputs": ["3", "7"]}',
        1.0,
    ),
    ("codeforces", "no code here", '{"inputs": ["1"], "outputs": ["1"]}', 0.0),
]


@pytest.mark.parametrize(("source", "completion", "truth", "score"), CODE_TESTS)
def test_verls_default_compute_score_on_referee(
    live_server: str, source: str, completion: str, truth: str, score: float
) -> None:
    """verl's own code-RL reward (``default_compute_score`` with ``sandbox_fusion_url``)
    with referee as the sandbox."""
    reward_score = verl_reward_score()
    got = reward_score.default_compute_score(
        source,
        completion,
        truth,
        sandbox_fusion_url=f"{live_server}/run_code",
        concurrent_semaphore=threading.Semaphore(4),
        memory_limit_mb=1024,
    )
    assert got == pytest.approx(score)
