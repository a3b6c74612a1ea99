"""Explicit and implicit rubric grading end to end against a real loopback endpoint."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import pytest

from referee.verifiers import Item, Status
from referee.verifiers.judge import JudgeVerifier
from referee.verifiers.judge.prompts import EXPLICIT, IMPLICIT, load_template
from tests.verifiers.judge.endpoint import JudgeEndpoint, block, char_logprobs, completion
from tests.verifiers.judge.scripts import rubric_judge

RUBRIC = [
    {"id": "correct", "text": "The answer is correct.", "weight": 3, "critical": True},
    {"id": "cites", "text": "It cites a source.", "weight": 1},
    {"id": "tone", "text": "Tone.", "kind": "ordinal", "choices": ["rude", "neutral", "kind"]},
    {"id": "rambles", "text": "It rambles.", "weight": -1},
]

MakeJudge = Callable[..., JudgeVerifier]


def judge_item(reference: Any = None, **params: Any) -> Item:
    return Item(
        id="x",
        verifier="judge",
        prompt="What is the capital of France?",
        response="Paris.",
        reference={"rubric": RUBRIC, "answer": "Paris"} if reference is None else reference,
        params=params,
        metadata={"k": 1},
    )


EXPLICIT_CASES = [
    # (scores the judge gives, expected reward, vetoed_by)
    ({"correct": 1, "cites": 1, "tone": 2, "rambles": 0}, 5 / 6, []),
    ({"correct": 1, "cites": 0, "tone": 1, "rambles": 1}, (3 + 0.5 - 1) / 6, []),
    ({"correct": 0, "cites": 1, "tone": 2, "rambles": 0}, 0.0, ["correct"]),
]


@pytest.mark.parametrize(("scores", "reward", "vetoed"), EXPLICIT_CASES)
async def test_explicit_rubric(
    endpoint: JudgeEndpoint,
    make_judge: MakeJudge,
    scores: dict[str, int],
    reward: float,
    vetoed: list[str],
) -> None:
    endpoint.script = rubric_judge(scores)
    [result] = await make_judge(supports_json_mode=True).ascore([judge_item()])
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(reward)
    assert result.details["vetoed_by"] == vetoed
    assert result.components["tone"] == scores["tone"] / 2
    assert result.details["reasons"]["cites"] == "cites judged"
    assert result.details["template"] == load_template(EXPLICIT).version
    assert result.details["usage"] == {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "calls": 1,
        "cache_hits": 0,
    }
    assert (result.id, result.metadata, result.verifier) == ("x", {"k": 1}, "judge@1")
    [request] = endpoint.requests
    assert request["response_format"] == {"type": "json_object"}
    assert request["model"] == "judge-test"
    assert "Paris." in request["messages"][-1]["content"]
    assert block(request["messages"][-1]["content"], "REFERENCE ANSWER") == "Paris"


async def test_criteria_split_over_concurrent_calls(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = rubric_judge({"correct": 1, "cites": 1, "tone": 2, "rambles": 0}, delay=0.2)
    [result] = await make_judge().ascore([judge_item(criteria_per_call=1)])
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(5 / 6)
    assert len(endpoint.requests) == 4
    assert endpoint.max_in_flight == 4  # the chunks were asked at the same time
    assert result.details["usage"]["calls"] == 4
    assert "response_format" not in endpoint.requests[0]  # profile has no JSON mode


async def test_implicit_mode(endpoint: JudgeEndpoint, make_judge: MakeJudge) -> None:
    endpoint.script = lambda _: completion('{"reason": "solid", "score": 8}')
    [result] = await make_judge().ascore([judge_item(mode="implicit", scale_min=0, scale_max=10)])
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(0.8)
    assert result.details["reason"] == "solid"
    assert result.details["template"] == load_template(IMPLICIT).version
    prompt = endpoint.requests[0]["messages"][-1]["content"]
    assert "from 0 (worst) to 10 (best)" in prompt and "It cites a source." in prompt


async def test_malformed_reply_is_reasked_then_scored(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.queue(completion("Let me think about this {not json"))
    endpoint.script = lambda _: completion('{"reason": "ok", "score": 5}')
    [result] = await make_judge().ascore([judge_item(mode="implicit")])
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(4 / 9)
    assert result.details["reasks"] == 1
    assert result.details["usage"]["calls"] == 2
    reask = endpoint.requests[1]["messages"]
    assert reask[-2] == {"role": "assistant", "content": "Let me think about this {not json"}
    assert "could not be read" in reask[-1]["content"]


@pytest.mark.parametrize("reply", ["no idea", '{"reason": "x", "score": 42}', ""])
async def test_unparsable_after_reasks_is_error_not_zero(
    endpoint: JudgeEndpoint, make_judge: MakeJudge, reply: str
) -> None:
    endpoint.script = lambda _: completion(reply)
    [result] = await make_judge().ascore([judge_item(mode="implicit", max_reasks=2)])
    assert result.status == Status.ERROR
    assert result.reward is None
    assert result.error is not None and result.error.code == "judge_unparsable"
    assert len(endpoint.requests) == 3


async def test_logprob_scoring_weighs_the_score_token(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    text = '{"reason": "good", "score": 8}'
    at = text.index("8")
    alternatives = [("8", math.log(0.5)), ("6", math.log(0.25)), ("10", math.log(0.25))]
    endpoint.script = lambda _: completion(text, logprobs=char_logprobs(text, {at: alternatives}))
    judge = make_judge(supports_logprobs=True, top_logprobs=5)
    [result] = await judge.ascore([judge_item(mode="implicit")])
    assert result.status == Status.OK, result.error
    expected = 0.5 * 8 + 0.25 * 6 + 0.25 * 10
    assert result.details["raw_score"] == pytest.approx(expected)
    assert result.details["scoring"] == "logprobs"
    assert endpoint.requests[0]["logprobs"] is True
    assert endpoint.requests[0]["top_logprobs"] == 5


async def test_logprobs_in_explicit_mode_per_criterion(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    rubric = [{"id": "a", "text": "A."}, {"id": "b", "text": "B."}]
    text = json.dumps({"criteria": [{"id": "a", "score": 1}, {"id": "b", "score": 0}]})
    at_a, at_b = text.index("1"), text.index("0")
    top = {
        at_a: [("1", math.log(0.9)), ("0", math.log(0.1))],
        at_b: [("0", math.log(0.6)), ("1", math.log(0.4))],
    }
    endpoint.script = lambda _: completion(text, logprobs=char_logprobs(text, top))
    [result] = await make_judge(supports_logprobs=True).ascore([judge_item(rubric)])
    assert result.status == Status.OK, result.error
    assert result.components == pytest.approx({"a": 0.9, "b": 0.4})
    assert result.reward == pytest.approx(0.65)


async def test_endpoint_without_logprobs_falls_back_to_the_sample(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = lambda _: completion('{"reason": "x", "score": 7}')
    [result] = await make_judge(supports_logprobs=True).ascore([judge_item(mode="implicit")])
    assert result.details["raw_score"] == 7 and result.details["scoring"] == "sample"


async def test_n_samples_are_averaged(endpoint: JudgeEndpoint, make_judge: MakeJudge) -> None:
    endpoint.script = lambda _: completion(
        '{"score": 2}', '{"score": 4}', '{"score": 9}', "garbage"
    )
    [result] = await make_judge().ascore([judge_item(mode="implicit", samples=4)])
    assert result.status == Status.OK, result.error
    assert result.details["raw_score"] == pytest.approx(5.0)  # unparsable samples are dropped
    assert endpoint.requests[0]["n"] == 4


async def test_cache_pays_identical_requests_once(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = lambda _: completion('{"score": 6}', delay=0.05)
    judge = make_judge()
    same = [judge_item(mode="implicit") for _ in range(5)]
    first = await judge.ascore(same)  # identical items in flight together share one call
    assert len(endpoint.requests) == 1
    assert [r.reward for r in first] == pytest.approx([5 / 9] * 5)
    [again] = await judge.ascore([judge_item(mode="implicit")])
    assert len(endpoint.requests) == 1
    assert again.details["cached"] is True and again.details["usage"]["cache_hits"] == 1
    other = judge_item(mode="implicit").model_copy(update={"response": "Lyon."})
    await judge.ascore([other, judge_item(mode="implicit", cache=False)])
    assert len(endpoint.requests) == 3
    assert judge.meter.snapshot()["default"].calls == 3


async def test_failures_are_not_cached(endpoint: JudgeEndpoint, make_judge: MakeJudge) -> None:
    endpoint.queue(completion("??"), completion("??"))
    endpoint.script = lambda _: completion('{"score": 10}')
    judge = make_judge()
    [failed] = await judge.ascore([judge_item(mode="implicit")])
    assert failed.status == Status.ERROR
    [scored] = await judge.ascore([judge_item(mode="implicit")])
    assert scored.status == Status.OK and scored.reward == 1.0


@pytest.mark.parametrize(
    ("reference", "params", "code", "field"),
    [
        (None, {"profile": "nope"}, "unknown_profile", "params.profile"),
        (None, {"mode": "vibes"}, "invalid_params", "params.mode"),
        (None, {"samples": 0}, "invalid_params", "params.samples"),
        (None, {"scale_min": 5, "scale_max": 5}, "invalid_params", "params.scale_max"),
        (None, {"scoring": "logprobs"}, "invalid_params", "params.scoring"),
        (
            [{"id": "a", "text": "x", "weight": 0}],
            {},
            "invalid_reference",
            "reference.rubric.0.weight",
        ),
        ({"rubric": []}, {}, "invalid_reference", "reference.rubric"),
        ("just a string", {}, "invalid_reference", "reference"),
        ({"rubric": []}, {"mode": "pairwise"}, "invalid_reference", "reference.answer"),
        (None, {"mode": "tournament"}, "invalid_group", "group"),
    ],
)
async def test_invalid_items_name_the_field(
    endpoint: JudgeEndpoint,
    make_judge: MakeJudge,
    reference: Any,
    params: dict[str, Any],
    code: str,
    field: str,
) -> None:
    [result] = await make_judge().ascore([judge_item(reference, **params)])
    assert result.status == Status.INVALID
    assert result.reward is None
    assert result.error is not None and result.error.code == code
    assert field in result.error.message
    assert endpoint.requests == []


def test_sync_score_runs_on_a_private_loop(endpoint: JudgeEndpoint, make_judge: MakeJudge) -> None:
    endpoint.script = lambda _: completion('{"score": 10}')
    judge = make_judge()
    results = judge.score([judge_item(mode="implicit"), judge_item({"rubric": "bad"})])
    assert [r.status for r in results] == [Status.OK, Status.INVALID]
    assert judge.score([judge_item(mode="implicit")])[0].details["cached"] is True


async def test_sync_score_inside_a_running_loop(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = lambda _: completion('{"score": 1}')
    [result] = make_judge().score([judge_item(mode="implicit")])
    assert result.status == Status.OK and result.reward == 0.0  # a wrong answer is ok with 0
