"""OpenRLHF's own reward client (``SingleTurnAgentExecutor``) against referee: its HTTP
path to ``/get_reward`` and its loader for a ``reward_func`` file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from openrlhf.utils.agent import SingleTurnAgentExecutor

from tests.service.peers.conftest import KEY

PROMPT = "<|im_start|>user\nWhat is 6 * 7?<|im_end|>\n<|im_start|>assistant\n"


def test_http_reward_with_the_key_in_the_url(keyed_server: str) -> None:
    executor = SingleTurnAgentExecutor(f"{keyed_server}/k/{KEY}/get_reward")
    answers = asyncio.run(
        executor._fetch_rewards_via_http(
            [PROMPT + "It is \\boxed{42}.", PROMPT + "\\boxed{41}"], [PROMPT, PROMPT], ["42", "42"]
        )
    )
    assert answers[0]["rewards"] == [1.0, 0.0]


def test_a_left_truncated_prompt_does_not_score_its_few_shot_answer(keyed_server: str) -> None:
    few_shot = "Q: 2+2? A: \\boxed{4}\n" * 40 + PROMPT
    executor = SingleTurnAgentExecutor(f"{keyed_server}/k/{KEY}/get_reward")
    answers = asyncio.run(
        executor._fetch_rewards_via_http([few_shot[500:] + "I don't know"], [few_shot], ["4"])
    )
    assert answers[0]["rewards"] == [0.0]


def test_reward_func_file_through_openrlhfs_loader(
    keyed_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REFEREE_URL", keyed_server)
    monkeypatch.setenv("REFEREE_API_KEY", KEY)
    path = tmp_path / "reward_func.py"
    path.write_text("from referee.service.adapters.openrlhf import reward_func  # noqa: F401\n")
    executor = SingleTurnAgentExecutor(str(path))
    [answer] = asyncio.run(
        executor._fetch_rewards_via_func([PROMPT + "\\boxed{42}"], [PROMPT], ["42"])
    )
    assert float(answer["rewards"][0]) == 1.0
