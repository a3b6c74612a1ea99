"""Pairwise and tournament modes against a real loopback endpoint."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from referee.verifiers import Item, Status
from referee.verifiers.judge import JudgeVerifier
from tests.verifiers.judge.endpoint import (
    JudgeEndpoint,
    Reply,
    block,
    char_logprobs,
    completion,
    user_text,
)
from tests.verifiers.judge.scripts import fair_pairwise_judge, position_biased_judge, quality

MakeJudge = Callable[..., JudgeVerifier]


def entry(response: str, group: str | None = "g", **params: Any) -> Item:
    return Item(
        id=response,
        verifier="judge",
        prompt="Write a haiku.",
        response=response,
        reference={"answer": "q=5 reference"},
        params=params,
        group=group,
    )


@pytest.mark.parametrize(
    ("response", "script", "reward"),
    [
        ("q=9 strong", fair_pairwise_judge, 1.0),
        ("q=1 weak", fair_pairwise_judge, 0.0),
        ("q=5 level", fair_pairwise_judge, 0.5),
        ("q=9 strong", position_biased_judge, 0.5),  # both orders cancel the bias
    ],
)
async def test_pairwise_against_the_reference(
    endpoint: JudgeEndpoint,
    make_judge: MakeJudge,
    response: str,
    script: Callable[[dict[str, Any]], Reply],
    reward: float,
) -> None:
    endpoint.script = script
    [result] = await make_judge().ascore([entry(response, mode="pairwise")])
    assert result.status == Status.OK, result.error
    assert result.reward == pytest.approx(reward)
    shown = [
        (block(user_text(r), "RESPONSE A"), block(user_text(r), "RESPONSE B"))
        for r in endpoint.requests
    ]
    assert sorted(shown) == sorted([(response, "q=5 reference"), ("q=5 reference", response)])
    assert "[REFERENCE ANSWER" not in user_text(endpoint.requests[0])  # it is the anchor


async def test_pairwise_with_an_explicit_anchor_shows_the_reference(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = fair_pairwise_judge
    [result] = await make_judge().ascore([entry("q=3", mode="pairwise", anchor="q=2 anchor")])
    assert result.reward == 1.0
    assert block(user_text(endpoint.requests[0]), "REFERENCE ANSWER") == "q=5 reference"


async def test_pairwise_logprobs_weigh_the_winner_token(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    text = '{"reason": "r", "winner": "A"}'
    at = text.index('A"')
    top = [("A", math.log(0.8)), ("B", math.log(0.2))]
    endpoint.script = lambda _: completion(text, logprobs=char_logprobs(text, {at: top}))
    [result] = await make_judge(supports_logprobs=True).ascore([entry("x", mode="pairwise")])
    # forward says A (x) with 0.8; backward says A (the anchor) with 0.8
    assert result.reward == pytest.approx((0.8 + 1 - 0.8) / 2)
    assert result.details["scoring"] == "logprobs"


@pytest.mark.parametrize("size", [2, 3, 5, 8])
async def test_tournament_ranks_the_group(
    endpoint: JudgeEndpoint, make_judge: MakeJudge, size: int
) -> None:
    endpoint.script = fair_pairwise_judge
    items = [entry(f"q={q}", mode="tournament", seed=7) for q in range(size)]
    results = await make_judge().ascore(items)
    assert [r.status for r in results] == [Status.OK] * size
    rounds = math.ceil(math.log2(size))
    assert results[-1].reward == 1.0  # the best response wins every match
    assert results[0].reward is not None and results[0].reward < 1.0
    assert len(endpoint.requests) == 2 * (size - 1)  # N - 1 matches, both orders each
    assert {r.details["rounds"] for r in results} == {rounds}
    assert sum(1 for r in results if r.reward == 0.0) == size // 2  # first-round losers
    winners = [m["winner"] for m in results[0].details["bracket"]]
    assert all(
        quality(w) >= quality(m["a"]) and quality(w) >= quality(m["b"])
        for w, m in zip(winners, results[0].details["bracket"], strict=True)
    )


async def test_tournament_bracket_is_seeded(endpoint: JudgeEndpoint, make_judge: MakeJudge) -> None:
    endpoint.script = fair_pairwise_judge
    judge = make_judge()

    async def bracket(seed: int) -> list[tuple[str, str]]:
        items = [entry(f"q={q}", mode="tournament", seed=seed, cache=False) for q in range(6)]
        results = await judge.ascore(items)
        return [(m["a"], m["b"]) for m in results[0].details["bracket"]]

    first = await bracket(1)
    assert await bracket(1) == first
    others = [await bracket(seed) for seed in range(2, 6)]
    assert any(other != first for other in others)


async def test_groups_are_separate_tournaments(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = fair_pairwise_judge
    items = [entry(f"q={q}", group=g, mode="tournament") for g in ("a", "b") for q in (1, 2)]
    results = await make_judge().ascore(items)
    assert [r.reward for r in results] == [0.0, 1.0, 0.0, 1.0]


async def test_a_failed_match_fails_the_whole_group(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = lambda _: Reply(status=400, body={"error": "context too long"})
    items = [entry(f"q={q}", mode="tournament") for q in range(4)]
    results = await make_judge().ascore(items)
    assert {(r.status, r.error.code if r.error else None) for r in results} == {
        (Status.ERROR, "judge_http_4xx")
    }


async def test_a_group_of_one_is_invalid(endpoint: JudgeEndpoint, make_judge: MakeJudge) -> None:
    [result] = await make_judge().ascore([entry("q=1", mode="tournament")])
    assert result.status == Status.INVALID
    assert result.error is not None and "group" in result.error.message
