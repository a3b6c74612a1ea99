"""TRL: reward functions with TRL's signature, None for failures, shared components."""

from __future__ import annotations

import asyncio

import httpx

from referee.service.adapters.mapping import ItemMapping
from referee.service.adapters.trl import reward_funcs


def served(url: str) -> float:
    for line in httpx.get(f"{url}/metrics").text.splitlines():
        if line.startswith('referee_http_requests_total{code="200",route="/v1/score"}'):
            return float(line.split()[-1])
    return 0.0


def test_reward_and_component_readers_share_one_request(live_server: str) -> None:
    mapping = ItemMapping(
        verifier="composite",
        params={
            "verifiers": {
                "acc": {"verifier": "math"},
                "fmt": {
                    "verifier": "format",
                    "params": {"mode": "regex", "pattern": "boxed"},
                    "reference": None,
                },
            },
            "formula": "0.9 * acc + 0.1 * fmt",
        },
    )
    reward, acc, fmt = reward_funcs(live_server, mapping, components=["acc", "fmt"])
    assert (reward.__name__, acc.__name__, fmt.__name__) == (
        "referee",
        "referee_acc",
        "referee_fmt",
    )
    prompts = ["2+2?"] * 3 + ["3+3?"]
    completions = ["\\boxed{4}", "4", "\\boxed{5}", "\\boxed{6}"]
    columns = {"answer": ["4", "4", "4", "6"], "trainer_state": None}

    async def step() -> tuple[list[float | None], ...]:
        return await asyncio.gather(
            reward(prompts, completions, **columns),
            acc(prompts, completions, **columns),
            fmt(prompts, completions, **columns),
        )

    before = served(live_server)
    rewards, accs, fmts = asyncio.run(step())
    assert served(live_server) - before == 1
    assert accs == [1.0, 1.0, 0.0, 1.0]
    assert fmts == [1.0, 0.0, 1.0, 1.0]
    assert rewards == [1.0, 0.9, 0.1, 1.0]


def test_failed_items_are_masked_with_none(live_server: str) -> None:
    [reward] = reward_funcs(live_server, ItemMapping(verifier="math"))
    out = asyncio.run(reward(["q", "q"], ["\\boxed{1}", "\\boxed{1}"], answer=["1", "\\frac{"]))
    assert out == [1.0, None]


def test_conversational_completions(live_server: str) -> None:
    [reward] = reward_funcs(live_server, ItemMapping(verifier="math"))
    prompts = [[{"role": "user", "content": "1+1?"}]] * 2
    completions = [
        [{"role": "assistant", "content": "\\boxed{2}"}],
        [{"role": "assistant", "content": "\\boxed{3}"}],
    ]
    assert asyncio.run(reward(prompts, completions, answer=["2", "2"])) == [1.0, 0.0]


def test_components_and_statuses_go_through_trl_hooks(live_server: str) -> None:
    mapping = ItemMapping(
        verifier="composite",
        params={"verifiers": {"acc": {"verifier": "math"}}, "formula": "acc"},
    )
    [reward] = reward_funcs(live_server, mapping)
    metrics: dict[str, float] = {}
    extra: dict[str, list[str]] = {}
    out = asyncio.run(
        reward(
            ["q", "q"],
            ["\\boxed{1}", "\\boxed{2}"],
            answer=["1", "1"],
            log_metric=metrics.__setitem__,
            log_extra=extra.__setitem__,
        )
    )
    assert out == [1.0, 0.0]
    assert metrics == {"referee/acc": 0.5}
    assert extra == {"referee_status": ["ok", "ok"]}
