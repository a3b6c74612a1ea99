"""A response too long for the judge the operator allows: the prompt-byte cap
(``max_prompt_bytes_per_item``) cannot carry what the policy wrote. That is the response's
doing, so the item scores its mode's floor, flagged ``response_too_long``; it was
``invalid: judge_budget``, which blames the client, and which stops a trainer's batch
(verl raises on it, OpenRLHF's ``/get_reward`` answers 422). A request too big without
the response stays ``invalid``.

Against the real loopback endpoint: what it received is asserted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from referee.verifiers import Item, Status
from referee.verifiers.judge import JudgeVerifier
from tests.verifiers.judge.endpoint import JudgeEndpoint, completion, embeddings
from tests.verifiers.judge.scripts import rubric_judge

MakeJudge = Callable[..., JudgeVerifier]
CAP = 4000
LONG = "It is Paris, as everyone knows. " * 200  # 6,400 bytes: past the cap on its own
RUBRIC = [
    {"id": "right", "text": "Names Paris."},
    {"id": "rude", "text": "Insults the reader.", "weight": -1},
]


def judged(mode: str, response: str = LONG, **params: Any) -> Item:
    reference: Any = {"rubric": RUBRIC, "answer": "Paris"}
    if mode in ("messages", "labels"):
        reference = {"messages": [{"role": "user", "content": f"Rate this answer: {response}"}]}
    if mode == "embedding":
        reference = "Paris"
    return Item(
        verifier="judge",
        prompt="What is the capital of France?",
        response=response,
        reference=reference,
        params={"mode": mode, **params},
    )


MODES = [
    # mode, params, the floor, its components
    ("explicit", {}, -0.5, {"right": 0.0, "rude": 1.0}),  # every criterion at its worst
    ("implicit", {}, 0.0, {"score": 0.0}),
    ("pairwise", {}, 0.0, {"win": 0.0}),
    ("messages", {"score_range": [-5, 5]}, -5.0, {"score": -5.0}),
    ("labels", {"labels": ["good", "bad"], "passing_labels": ["good"]}, 0.0, {"passed": 0.0}),
    ("embedding", {}, -1.0, {"cosine": -1.0}),
]


@pytest.mark.parametrize(("mode", "params", "floor", "components"), MODES)
async def test_a_response_too_long_for_the_judge_scores_the_modes_floor(
    endpoint: JudgeEndpoint,
    make_judge: MakeJudge,
    mode: str,
    params: dict[str, Any],
    floor: float,
    components: dict[str, float],
) -> None:
    endpoint.script = lambda _: completion('{"reason": "r", "score": 1}')
    judge = make_judge(max_prompt_bytes_per_item=CAP, allow_messages_mode=True)
    [result] = await judge.ascore([judged(mode, **params)])
    assert result.status is Status.OK, result.error
    assert (result.reward, result.components) == (floor, components)
    assert result.details["flags"] == ["response_too_long"]
    assert "max_prompt_bytes_per_item" in result.details["reason"]
    assert endpoint.requests == []


async def test_the_same_items_with_a_short_response_are_judged(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    """The cap is what the long response ran into: the same items with a short one are
    sent and scored (so the floor above is not what every item gets)."""
    endpoint.script = rubric_judge({"right": 1, "rude": 0})
    judge = make_judge(max_prompt_bytes_per_item=CAP)
    [result] = await judge.ascore([judged("explicit", "It is Paris. " * 10)])
    assert (result.status, result.reward) == (Status.OK, 0.5)  # (1 * 1 - 1 * 0) / 2
    endpoint.script = lambda _: embeddings([1.0, 0.0], [1.0, 0.0])
    [result] = await judge.ascore([judged("embedding", "It is Paris. " * 10)])
    assert (result.status, result.reward) == (Status.OK, 1.0)


async def test_a_response_that_fills_the_cap_over_several_calls_is_floored_too(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    """Each of 4 calls (one criterion each) repeats a 3 kB response: the second call would
    pass a 6 kB cap. Without the response every call would fit: the response's doing."""
    endpoint.script = rubric_judge({f"c{i}": 1 for i in range(4)})
    judge = make_judge(max_prompt_bytes_per_item=6000)
    rubric = [{"id": f"c{i}", "text": f"Criterion {i} holds."} for i in range(4)]
    item = Item(
        verifier="judge",
        prompt="What is the capital of France?",
        response="x" * 3000,
        reference={"rubric": rubric, "answer": "Paris"},
        params={"criteria_per_call": 1, "cache": False},
    )
    [result] = await judge.ascore([item])
    assert (result.status, result.reward) == (Status.OK, 0.0)
    assert result.details["flags"] == ["response_too_long"]
    assert len(endpoint.requests) <= 2


async def test_a_request_too_big_without_the_response_is_still_invalid(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    judge = make_judge(max_prompt_bytes_per_item=CAP)
    item = Item(
        verifier="judge",
        prompt="What is the capital of France? " * 200,  # the client's, not the policy's
        response=LONG,
        reference={"rubric": RUBRIC, "answer": "Paris"},
    )
    [result] = await judge.ascore([item])
    assert result.status is Status.INVALID
    assert result.error is not None and result.error.code == "judge_budget"
    assert endpoint.requests == []


async def test_a_tournament_does_not_tell_its_members_responses_apart(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    """A match carries two members' responses: which one is too long is not told apart,
    so the group stays invalid (a known limit, in the module docstring)."""
    endpoint.script = lambda _: completion('{"reason": "r", "winner": "A"}')
    judge = make_judge(max_prompt_bytes_per_item=CAP)
    items = [
        judged("tournament", LONG if i == 0 else "Paris.").model_copy(update={"group": "g"})
        for i in range(3)
    ]
    results = await judge.ascore(items)
    assert {r.status for r in results} == {Status.INVALID}
