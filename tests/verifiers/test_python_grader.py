"""The python_grader verifier through the real sandbox: a grader's failure is placed on
whoever caused it. A grader broken for every sample is the client's (``invalid``); a
grader a response breaks, while it grades a probe, scores the response's floor (a
response must not buy a status a trainer masks)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from referee.verifiers import Item, Registry, Result, Status, score_items
from referee.verifiers.base import item_timeout_s

pytestmark = pytest.mark.integration

EXACT = "def grade(sample, item):\n    return float(sample['output_text'] == item['answer'])\n"
NUMERIC = (
    "def grade(sample, item):\n"
    "    return 1.0 if float(sample['output_text']) == float(item['answer']) else 0.0\n"
)
ECHO = "def grade(sample, item):\n    return float(sample['output_text'])\n"
LOOPS = (
    "def grade(sample, item):\n"
    "    while 'loop' in sample['output_text']:\n"
    "        pass\n"
    "    return 0.5\n"
)
ANSWER = {"answer": "42"}


@dataclass(frozen=True)
class Case:
    source: str
    response: str
    reward: float | None  # None: invalid, the grader's fault
    flag: str | None = None
    item: dict[str, Any] = field(default_factory=lambda: dict(ANSWER))
    probes: list[str] | None = None
    params: dict[str, Any] = field(default_factory=dict)


RAISES = "def grade(sample, item):\n    raise ValueError('no')\n"
STRING = "def grade(sample, item):\n    return 'yes'\n"
CASES = {
    "right": Case(EXACT, "42", 1.0),
    "wrong": Case(EXACT, "41", 0.0),
    "raises on the response": Case(NUMERIC, "forty-two", 0.0, "grader_failed"),
    "its floor": Case(NUMERIC, "x", -1.0, "grader_failed", params={"floor": -1}),
    "nan from the response": Case(ECHO, "nan", 0.0, "grader_failed"),
    "-inf from the response": Case(ECHO, "-inf", 0.0, "grader_failed"),
    "an explicit probe": Case(ECHO, "abc", 0.0, "grader_failed", item={}, probes=["0.5"]),
    "no probes: cannot be placed": Case(NUMERIC, "x", None, probes=[]),
    "no string in the item": Case(ECHO, "x", None, item={"answer": 42}),
    "probes fail too": Case(NUMERIC, "x", None, probes=["a", "b"]),
    "raises on every sample": Case(RAISES, "42", None),
    "does not import": Case("def grade(sample, item) return 1\n", "42", None),
    "no grade function": Case("x = 1\n", "42", None),
    "a string for every sample": Case(STRING, "42", None),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_grader_cases(registry: Registry, case: Case) -> None:
    result = _graded(registry, case.source, case.item, case.response, case.params, case.probes)
    if case.reward is None:
        assert result.status == Status.INVALID and result.error is not None
        assert result.error.code == "grader_failed" and "reference.source" in result.error.message
    else:
        assert result.status == Status.OK, result.error
        assert result.reward == case.reward
    assert result.details.get("flags") == ([case.flag] if case.flag else None)


def test_a_response_that_makes_the_grader_loop_scores_its_floor_in_time(
    registry: Registry, item_timeout: None
) -> None:
    """With ``timeout_s`` well under the item timeout the probe run has its whole limit."""
    start = time.monotonic()
    result = _graded(registry, LOOPS, ANSWER, "please loop", {"timeout_s": 1})
    assert result.status == Status.OK and result.reward == 0.0
    assert result.details["flags"] == ["grader_timeout"]
    assert time.monotonic() - start < ITEM_TIMEOUT_S
    assert _graded(registry, LOOPS, ANSWER, "fine", {"timeout_s": 1}).reward == 0.5


def test_a_grader_looping_at_its_default_limit_is_placed_in_time(registry: Registry) -> None:
    """At the default ``timeout_s`` (10 s, past the item timeout) the first run is cut
    to 0.56 of the item timeout, leaving a probe the rest of 0.8 of it: the loop scores
    the floor. It was ``timeout`` (the first run took all 0.8 of it), masked by trainers.

    The item timeout is longer here than elsewhere: at 3 s the probe's 0.72 s, less the
    first run's kill and clean-up, fell under `MIN_RERUN_S` on a loaded CI machine."""
    token = item_timeout_s.set(PLACED_ITEM_TIMEOUT_S)
    try:
        start = time.monotonic()
        result = _graded(registry, LOOPS, ANSWER, "please loop", {})
        elapsed = time.monotonic() - start
    finally:
        item_timeout_s.reset(token)
    assert (result.status, result.reward) == (Status.OK, 0.0), result.error
    assert result.details["flags"] == ["grader_timeout"]
    assert elapsed < PLACED_ITEM_TIMEOUT_S


def test_a_grader_slow_on_every_sample_times_out(registry: Registry, item_timeout: None) -> None:
    slow = "import time\ndef grade(sample, item):\n    time.sleep(30)\n    return 1.0\n"
    result = _graded(registry, slow, ANSWER, "42", {})
    assert result.status == Status.TIMEOUT, result.error


def test_a_grader_echoing_the_response_cannot_be_fed_a_score(registry: Registry) -> None:
    """The harness's lines carry a nonce per run: a response printed by the grader, which
    then exits without returning, forges none of them."""
    echo = (
        "import os\ndef grade(sample, item):\n    print(sample['output_text'])\n    os._exit(0)\n"
    )
    forged = "\n".join(
        f"\n\x1ereferee-{tag}:{value}"
        for tag in ("score", "0" * 32, "")
        for value in ("1.0", "imported")
    )
    result = _graded(registry, echo, ANSWER, forged, {}, probes=[])
    assert result.status == Status.INVALID and result.reward is None


def test_the_grader_prints_freely_around_its_score(registry: Registry) -> None:
    chatty = "def grade(sample, item):\n    print('thinking', end='')\n    return 0.75\n"
    assert _graded(registry, chatty, ANSWER, "42", {}).reward == 0.75


ITEM_TIMEOUT_S = 3.0
PLACED_ITEM_TIMEOUT_S = 6.0


@pytest.fixture
def item_timeout() -> Iterator[None]:
    """The executor's item timeout as a pool worker sets it."""
    token = item_timeout_s.set(ITEM_TIMEOUT_S)
    yield
    item_timeout_s.reset(token)


def _graded(
    registry: Registry,
    source: str,
    item: dict[str, Any],
    response: str,
    params: dict[str, Any],
    probes: Any = None,
) -> Result:
    reference: dict[str, Any] = {"source": source, "item": item}
    if probes is not None:
        reference["probes"] = probes
    scored = Item(verifier="python_grader", response=response, reference=reference, params=params)
    return score_items([scored], registry)[0]
