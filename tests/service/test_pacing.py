"""Responses that keep a sandbox busy, through real worker processes: each verifier that
runs a response's code (or a reference's program on it) paces its runs to the item
timeout the pool's worker passes down (`item_timeout_s`), so such a response scores its
floor, flagged, and the pool never has to answer ``timeout`` for it. A ``timeout`` is
masked or retried by trainers: a response that could cause one would escape its 0.

The verifiers' own tests set the timeout in the test's thread; these check that the
worker passes it and that the margins hold against the pool's own clock."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Iterator

import pytest

from referee.service.execution.process_pool import ProcessPool
from referee.verifiers import Item, Result, Status
from referee.verifiers.engines import EngineSettings
from tests.verifiers.code.conftest import code_item, fenced
from tests.verifiers.code.test_verilog import SLOW_TO_BUILD, TESTBENCH

ITEM_TIMEOUT_S = 4.0  # margins that hold on a 2-core machine under the full suite
CASES = {"inputs": [f"{i}\n" for i in range(12)], "outputs": [f"{i}\n" for i in range(12)]}
MANY_CASES = {"inputs": ["0\n"] * 40, "outputs": ["0\n"] * 40}
"""40 runs of 0.5 s: 10 s or more, two at a time, so pacing must cut some within 4 s (12
fitted in 3.1 s on an idle machine: no case was cut, and no flag was owed)."""
HANGS_ON_HANG = """import sys
inp, exp, act = (open(p).read() for p in sys.argv[1:4])
while act.strip() == "hang":
    pass
print(1.0 if act.split() == exp.split() else 0.0)
"""
GRADER_LOOPS = """def grade(sample, item):
    while "loop" in sample["output_text"]:
        pass
    return 0.5
"""
CHECK_LOOPS = "while open('answer.txt').read() == 'loop':\n    pass\nprint(1.0)"
ENDLESS_SQL = (
    "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"
)

# (item, the flag its floor carries)
BUSY = {
    "code: a program that loops": (
        code_item(fenced("while True: pass"), MANY_CASES, time_limit_s=0.5),
        "time_budget",
    ),
    "code: output a special judge hangs on": (
        code_item(fenced("input()\nprint('hang')"), {**CASES, "checker": HANGS_ON_HANG}),
        "checker_timeout",
    ),
    "python_grader: a grader that loops, default limits": (
        Item(
            verifier="python_grader",
            response="please loop",
            reference={"source": GRADER_LOOPS, "item": {"answer": "42"}},
        ),
        "grader_timeout",
    ),
    "state: files a checker loops on, default limits": (
        Item(
            verifier="state",
            response="",
            reference=CHECK_LOOPS,
            params={"files": {"answer.txt": base64.b64encode(b"loop").decode()}},
        ),
        "checker_timeout",
    ),
    "verilog: a design slow to build": (
        Item(verifier="verilog", response=fenced(SLOW_TO_BUILD, "verilog"), reference=TESTBENCH),
        "compile_timeout",
    ),
    "sql: a query that never ends": (
        Item(
            verifier="sql",
            response=ENDLESS_SQL,
            reference={"schema": "CREATE TABLE t (x);", "query": "SELECT 1"},
            params={"timeout_s": 30},
        ),
        None,
    ),
}


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPool]:
    p = ProcessPool("pacing", 2, 2048, EngineSettings())
    p.start()
    yield p
    p.close()


def run(pool: ProcessPool, items: list[Item]) -> list[Result]:
    return asyncio.run(pool.run(items, ITEM_TIMEOUT_S, time.monotonic() + 60))


def test_busy_responses_score_their_floor_not_timeout(pool: ProcessPool) -> None:
    names = list(BUSY)
    results = run(pool, [BUSY[name][0] for name in names])
    for name, result in zip(names, results, strict=True):
        flag = BUSY[name][1]
        assert (result.status, result.reward) == (Status.OK, 0.0), (name, result.error)
        if flag is not None:
            assert flag in result.details["flags"], (name, result.details)
        assert result.elapsed_ms < ITEM_TIMEOUT_S * 1000, name
