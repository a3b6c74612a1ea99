"""Messages mode: the caller's own judge conversation, sent as it is, scored on its range.

Against the real loopback endpoint: what the endpoint received is asserted, not assumed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from referee.verifiers import Item, Status
from referee.verifiers.judge import JudgeVerifier
from referee.verifiers.judge.prompts import messages_version
from tests.verifiers.judge.conftest import fast_profile
from tests.verifiers.judge.endpoint import JudgeEndpoint, Reply, completion

MakeJudge = Callable[..., JudgeVerifier]

MESSAGES = [
    {"role": "system", "content": "You grade answers. Reply with a number only."},
    {"role": "user", "content": "Answer: Paris\nReference: Paris\nScore 0 to 10."},
]


def messages_item(messages: Any = None, **params: Any) -> Item:
    return Item(
        id="m",
        verifier="judge",
        response="Paris",
        reference={"messages": MESSAGES if messages is None else messages},
        params={"mode": "messages", "score_range": [0, 10], **params},
    )


async def test_messages_are_sent_as_they_are(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = lambda _: completion('{"result": 7.5, "reason": "close"}')
    judge = make_judge(
        allow_messages_mode=True,
        supports_json_mode=True,
        supports_logprobs=True,
        extra_body={"top_k": 5},
    )
    sampling = {"temperature": 0.3, "top_p": 0.9, "seed": 11, "max_tokens": 64}
    [result] = await judge.ascore([messages_item(sampling=sampling)])
    assert result.status == Status.OK, result.error
    assert result.reward == 7.5  # the raw score on the caller's range, not normalised
    assert result.components == {"score": 7.5}
    assert result.details["mode"] == "messages"
    assert result.details["reason"] == "close"
    assert result.details["template"] == messages_version(MESSAGES)
    assert result.details["template"].startswith("messages@")
    assert result.details["scoring"] == "sample"
    [request] = endpoint.requests
    assert request["messages"] == MESSAGES  # no rubric template around them
    assert {k: request[k] for k in sampling} == sampling
    assert request["top_k"] == 5  # the profile's extra_body still applies
    assert "response_format" not in request  # caller prompts need not mention JSON
    assert "logprobs" not in request  # a caller's range has no token scale to weigh


@pytest.mark.parametrize(
    ("score_range", "reply", "reward"),
    [
        ([0, 1], "0.7", 0.7),
        ([0, 1], '{"score": 1}', 1.0),
        ([0, 1], '```json\n{"steps": [], "result": 0.25}\n```', 0.25),
        ([-1, 1], "-0.5", -0.5),
        ([1, 5], "Result: 4", 4.0),
    ],
)
async def test_ranged_scores(
    endpoint: JudgeEndpoint,
    make_judge: MakeJudge,
    score_range: list[float],
    reply: str,
    reward: float,
) -> None:
    endpoint.script = lambda _: completion(reply)
    [result] = await make_judge(allow_messages_mode=True).ascore(
        [messages_item(score_range=score_range)]
    )
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(reward)


@pytest.mark.parametrize("reply", ["11", '{"result": -0.1}', "I will not grade this.", ""])
async def test_out_of_range_or_unparsable_is_error_after_reasks(
    endpoint: JudgeEndpoint, make_judge: MakeJudge, reply: str
) -> None:
    endpoint.script = lambda _: completion(reply)
    [result] = await make_judge(allow_messages_mode=True).ascore([messages_item(max_reasks=1)])
    assert result.status == Status.ERROR and result.reward is None
    assert result.error is not None and result.error.code == "judge_unparsable"
    assert len(endpoint.requests) == 2
    reask = endpoint.requests[1]["messages"]
    assert reask[: len(MESSAGES)] == MESSAGES
    assert reask[-2] == {"role": "assistant", "content": reply}
    assert "could not be read" in reask[-1]["content"]


async def test_reask_then_scored(endpoint: JudgeEndpoint, make_judge: MakeJudge) -> None:
    endpoint.queue(completion("Eleven out of ten!"))
    endpoint.script = lambda _: completion("9")
    [result] = await make_judge(allow_messages_mode=True).ascore([messages_item()])
    assert result.status == Status.OK and result.reward == 9.0
    assert result.details["reasks"] == 1
    assert result.details["usage"]["calls"] == 2


async def test_server_errors_are_error_not_zero(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = lambda _: Reply(status=500, body={"error": "down"})
    [result] = await make_judge(allow_messages_mode=True, retries=1).ascore([messages_item()])
    assert result.status == Status.ERROR and result.reward is None
    assert result.error is not None and result.error.code == "judge_http_5xx"
    assert len(endpoint.requests) == 2


async def test_model_selects_the_profile(endpoint: JudgeEndpoint) -> None:
    profiles = {
        "default": fast_profile(endpoint.url, model="local-judge", allow_messages_mode=True),
        "hosted": fast_profile(endpoint.url, model="gpt-4o-2024-08-06", allow_messages_mode=True),
    }
    judge = JudgeVerifier(profiles=profiles, item_deadline_s=5)
    endpoint.script = lambda _: completion("1")
    items = [
        messages_item(model="gpt-4o-2024-08-06"),
        messages_item([{"role": "user", "content": "other"}], model="o3"),
    ]
    results = await judge.ascore(items)
    await judge.aclose()
    assert [r.status for r in results] == [Status.OK, Status.OK]
    assert [r.details["profile"] for r in results] == ["hosted", "default"]
    assert sorted(r["model"] for r in endpoint.requests) == ["gpt-4o-2024-08-06", "local-judge"]


@pytest.mark.parametrize(
    ("messages", "params", "code", "field"),
    [
        (None, {"model": "o3"}, "unknown_model", "params.model: no judge profile"),
        ([], {}, "invalid_reference", "reference.messages"),
        ([{"role": "tool", "content": "x"}], {}, "invalid_reference", "reference.messages.0.role"),
        (None, {"score_range": [1, 1]}, "invalid_params", "params.score_range"),
        (None, {"scoring": "logprobs"}, "invalid_params", "params.scoring"),
        (None, {"sampling": {"temperature": 3}}, "invalid_params", "params.sampling.temperature"),
    ],
)
async def test_invalid_messages_items_name_the_field(
    endpoint: JudgeEndpoint,
    messages: Any,
    params: dict[str, Any],
    code: str,
    field: str,
) -> None:
    judge = JudgeVerifier(
        profiles={"hosted": fast_profile(endpoint.url, allow_messages_mode=True)}, item_deadline_s=5
    )
    [result] = await judge.ascore([messages_item(messages, profile="hosted", **params)])
    assert result.status == Status.INVALID and result.reward is None
    assert result.error is not None and result.error.code == code
    assert field in result.error.message
    assert endpoint.requests == []


async def test_identical_messages_are_paid_once(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = lambda _: completion("3")
    judge = make_judge(allow_messages_mode=True)
    first, second = await judge.ascore([messages_item(), messages_item()])
    assert first.reward == second.reward == 3.0
    assert len(endpoint.requests) == 1
