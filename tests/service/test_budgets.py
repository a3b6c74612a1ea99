"""CPU budgets (`referee.verifiers.budget`) as the process pool enforces them: an item
whose verifier began a budget and went past it is scored again in a fresh worker, told
that its budget is spent, so it gets the verifier's over-budget verdict, not ``timeout``.

Real worker processes, real CPU time; the ``budgeted`` verifier of the test plugin spins
and sleeps on demand, and ``math`` gets answers that keep sympy busy for minutes.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from referee.service.execution.cpu_clock import cpu_s, own_cpu_s
from referee.service.execution.process_pool import ProcessPool
from referee.service.http.app import create_app
from referee.verifiers import Item, Result, Status, budget
from referee.verifiers.engines import EngineSettings
from tests.service.conftest import small_settings

BUDGET_S = 0.3
RESPAWN_S = 3.0
"""Generous bound for stopping a worker and starting its replacement on a loaded CI box."""

SLOW_ANSWERS = [
    r"\boxed{||\binom{\pi}{1000}||}",  # about 30 s of sympy
    r"\boxed{e^{\binom{\sin(\sqrt{3})}{\sin(n^{e})}}}",  # over two minutes
]


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPool]:
    p = ProcessPool("budget", 1, 2048, EngineSettings(cpu_budget_s=BUDGET_S))
    p.start()
    yield p
    p.close()


def run(pool: ProcessPool, items: list[Item], item_timeout: float = 30.0) -> list[Result]:
    return asyncio.run(pool.run(items, item_timeout, time.monotonic() + 60))


def assert_over_budget(result: Result) -> None:
    """Every budgeted verifier says it the same way: the flag and the reason."""
    assert result.details["flags"] == ["over_budget"]
    assert result.details["reason"] == budget.exceeded(BUDGET_S)


def budgeted(**params: float) -> Item:
    return Item(verifier="budgeted", response="x", params=params)


def math(response: str, reference: str = "1") -> Item:
    return Item(verifier="math", response=response, reference=reference)


def test_an_item_past_its_budget_gets_the_verdict_of_its_second_attempt(
    pool: ProcessPool,
) -> None:
    items = [
        Item(verifier="string", response="a", reference="a"),
        budgeted(budget_s=BUDGET_S, spin_s=60),
        Item(verifier="string", response="a", reference="a"),
    ]
    start = time.monotonic()
    before, over, after = run(pool, items)
    assert time.monotonic() - start < BUDGET_S + RESPAWN_S
    assert over.status == Status.OK and over.reward == 0.0
    assert over.details["rule"] == "over_budget"
    assert before.reward == after.reward == 1.0


@pytest.mark.parametrize(
    ("params", "why"),
    [
        ({"budget_s": 2.0, "spin_s": 0.2}, "within budget"),
        ({"budget_s": 0.3, "sleep_s": 0.8}, "sleeping spends wall time, not CPU"),
    ],
)
def test_work_within_its_cpu_budget_is_scored(
    pool: ProcessPool, params: dict[str, float], why: str
) -> None:
    [result] = run(pool, [budgeted(**params)])
    assert (result.status, result.reward) == (Status.OK, 1.0), why


def test_the_item_timeout_still_comes_first_when_it_is_shorter(pool: ProcessPool) -> None:
    [result] = run(pool, [budgeted(budget_s=30.0, spin_s=60)], item_timeout=0.5)
    assert result.status == Status.TIMEOUT and result.error is not None
    assert result.error.code == "item_timeout"


def test_no_item_is_budgeted_before_its_verifier_begins_a_budget(pool: ProcessPool) -> None:
    # `slow` never calls `budget.begin`: only the item timeout stops it.
    [result] = run(pool, [Item(verifier="slow", response="x", params={"seconds": 1.0})])
    assert (result.status, result.reward) == (Status.OK, 1.0)


@pytest.mark.parametrize("answer", SLOW_ANSWERS)
def test_a_math_answer_that_keeps_sympy_busy_scores_zero_flagged(
    pool: ProcessPool, answer: str
) -> None:
    start = time.monotonic()
    [result] = run(pool, [math(answer)])
    assert time.monotonic() - start < BUDGET_S + RESPAWN_S
    assert (result.status, result.reward) == (Status.OK, 0.0)
    assert result.details["rule"] == "over_budget"
    assert_over_budget(result)
    assert f"{BUDGET_S:g} s of CPU" in result.details["reason"]


def test_a_reasoning_gym_answer_that_keeps_its_scorer_busy_scores_zero_flagged(
    pool: ProcessPool,
) -> None:
    # simple_integration simplifies the answer's derivative: over a minute for this one.
    reasoning_gym = pytest.importorskip("reasoning_gym")
    [entry] = reasoning_gym.create_dataset("simple_integration", size=1, seed=3)
    entry = json.loads(json.dumps(entry, default=str))
    slow = "(sin(x)+cos(x)+x)**100"
    right = entry["answer"]
    items = [
        Item(
            verifier="reasoning_gym",
            response=f"<answer>{answer}</answer>",
            reference={"dataset": "simple_integration", "entry": entry},
        )
        for answer in (slow, right)
    ]
    start = time.monotonic()
    over, scored = run(pool, items)
    assert time.monotonic() - start < BUDGET_S + RESPAWN_S + 1.0  # + importing the scorer
    assert (over.status, over.reward) == (Status.OK, 0.0)
    assert_over_budget(over)
    assert (scored.status, scored.reward) == (Status.OK, 1.0)


def test_a_response_that_keeps_a_similarity_metric_busy_scores_zero_flagged(
    pool: ProcessPool,
) -> None:
    # METEOR aligns every pair of words: 3 s for 100,000 words against 2,000.
    rng = random.Random(0)
    words = [f"w{i}" for i in range(3000)]
    reference = " ".join(rng.choice(words) for _ in range(2000))
    response = " ".join(rng.choice(words) for _ in range(100_000))
    params = {"metric": "meteor"}
    item = Item(verifier="similarity", response=response, reference=reference, params=params)
    [result] = run(pool, [item])
    assert (result.status, result.reward) == (Status.OK, 0.0)
    assert_over_budget(result)


def test_a_response_that_keeps_punkt_busy_follows_no_instruction_flagged(
    pool: ProcessPool,
) -> None:
    # Punkt: about 0.1 ms a sentence; 150,000 of them take far longer than the budget.
    reference = {
        "instruction_id_list": ["length_constraints:number_sentences"],
        "kwargs": [{"num_sentences": 2, "relation": "at least"}],
    }
    item = Item(verifier="instructions", response="It is. " * 150_000, reference=reference)
    start = time.monotonic()
    [result] = run(pool, [item])
    assert time.monotonic() - start < BUDGET_S + RESPAWN_S
    assert (result.status, result.reward) == (Status.OK, 0.0)
    assert_over_budget(result)


MEGABYTE = 1_000_000
COSTLY_RESPONSES: dict[str, tuple[str, object, dict[str, Any], str]] = {
    # verifier, reference, params, a response that costs it seconds of CPU
    "choice: a megabyte of one-letter paragraphs": ("choice", "C", {}, "a\n\n" * (MEGABYTE // 3)),
    "tool_call: a megabyte of Python statements, where no call is right": (
        "tool_call",
        {"calls": []},
        {},
        "a\n\n" * (MEGABYTE // 3),
    ),
    "similarity: sacrebleu tokenizing a megabyte of commas": (
        "similarity",
        "the cat sat",
        {"metric": "bleu"},
        "," * MEGABYTE,
    ),
}


@pytest.mark.parametrize("case", list(COSTLY_RESPONSES))
def test_a_response_costly_to_read_scores_zero_flagged(pool: ProcessPool, case: str) -> None:
    verifier, reference, params, response = COSTLY_RESPONSES[case]
    item = Item(verifier=verifier, response=response, reference=reference, params=params)
    start = time.monotonic()
    [result] = run(pool, [item])
    assert time.monotonic() - start < BUDGET_S + RESPAWN_S
    assert (result.status, result.reward) == (Status.OK, 0.0), result
    assert_over_budget(result)


def test_a_group_repeating_a_slow_answer_pays_for_it_once(pool: ProcessPool) -> None:
    # The fresh worker keeps the over-budget verdict in its pair cache, like any verdict.
    group = [math(SLOW_ANSWERS[0], reference="2") for _ in range(8)]
    group.insert(4, math(r"\boxed{2}", reference="2"))
    start = time.monotonic()
    results = run(pool, group)
    assert time.monotonic() - start < BUDGET_S + RESPAWN_S
    assert [r.reward for r in results] == [0.0] * 4 + [1.0] + [0.0] * 4
    assert {r.details["rule"] for r in results[:4]} == {"over_budget"}


def test_a_composite_keeps_its_other_components_when_math_is_over_budget(
    pool: ProcessPool,
) -> None:
    params: dict[str, Any] = {
        "verifiers": {
            "correct": {"verifier": "math"},
            "boxed": {"verifier": "format", "params": {"mode": "regex", "pattern": r"\\boxed\{"}},
        },
        "formula": "0.8*correct + 0.2*boxed",
    }
    item = Item(verifier="composite", response=SLOW_ANSWERS[0], reference="1", params=params)
    [result] = run(pool, [item])
    assert result.status == Status.OK, result.error
    assert result.components == {"correct": 0.0, "boxed": 1.0}
    assert result.reward == pytest.approx(0.2)


def test_a_slow_reference_is_not_the_responses_fault(pool: ProcessPool) -> None:
    # The budget begins after the reference is parsed: a reference sympy chokes on is the
    # client's data, and the item timeout answers for it (never a 0 for the response).
    [result] = run(pool, [math(r"\boxed{1}", reference=SLOW_ANSWERS[0][7:-1])], item_timeout=1.0)
    assert result.status in (Status.TIMEOUT, Status.INVALID), result


def test_the_parent_reads_a_workers_cpu_time_on_the_workers_own_clock() -> None:
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    theirs, ours = cpu_s(os.getpid()), own_cpu_s()
    assert theirs is not None and abs(theirs - ours) <= 0.05
    assert cpu_s(2**22 + 17) is None  # above pid_max's default: no such process


def test_the_gateway_answers_a_slow_math_answer_with_zero_under_the_configured_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REFEREE_CPU_BUDGET_S", "0.4")
    settings = small_settings(item_timeout_s=20.0, cpu_workers=1)
    assert settings.engines.cpu_budget_s == 0.4
    body = {"items": [{"verifier": "math", "response": SLOW_ANSWERS[1], "reference": "1"}]}
    with TestClient(create_app(settings)) as client:
        start = time.monotonic()
        response = client.post("/v1/score", json=body)
        elapsed = time.monotonic() - start
    assert response.status_code == 200
    [result] = response.json()["results"]
    assert (result["status"], result["reward"]) == ("ok", 0.0)
    assert result["details"]["flags"] == ["over_budget"]
    assert elapsed < 0.4 + RESPAWN_S


def test_a_looping_program_fails_within_the_item_timeout_not_timeout(client: TestClient) -> None:
    """The sandbox pool's workers are told each message's item timeout, and the code
    verifier paces its cases to it (`referee.verifiers.code.verifier.SUITE_SHARE`)."""
    suite = {"inputs": [f"{i}\n" for i in range(12)], "outputs": [f"{i}\n" for i in range(12)]}
    item = {
        "verifier": "code",
        "response": "```python\nwhile True: pass\n```",
        "reference": suite,
        "params": {"time_limit_s": 0.3},
    }
    response = client.post("/v1/score", json={"items": [item], "item_timeout_s": 1.0})
    [result] = response.json()["results"]
    assert (result["status"], result["reward"]) == ("ok", 0.0), result
    assert "time_budget" in result["details"]["flags"]
