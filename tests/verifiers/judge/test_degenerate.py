"""Every degenerate response through the judge's modes, against a working loopback judge:
each item is scored (``ok``), never ``invalid`` or ``error``. Lone surrogates once broke
the whole batch (the request body, the reply cache's key and the byte count could not
encode them); the judge now reads them as U+FFFD."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from referee.verifiers import Item, Status
from referee.verifiers.judge import JudgeVerifier
from tests.integrity.test_degenerate_responses import DEGENERATE
from tests.verifiers.judge.endpoint import JudgeEndpoint, Reply, completion, embeddings
from tests.verifiers.judge.scripts import rubric_judge

MakeJudge = Callable[..., JudgeVerifier]
RUBRIC = {"rubric": [{"id": "c0", "text": "The answer is 4."}], "answer": "4"}
MODES: dict[str, tuple[Any, dict[str, Any]]] = {
    "explicit": (RUBRIC, {}),
    "implicit": (RUBRIC, {"mode": "implicit"}),
    "pairwise": (RUBRIC, {"mode": "pairwise"}),
    "embedding": ("4", {"mode": "embedding"}),
    "messages": (
        {"messages": [{"role": "user", "content": "Rate the answer from 0 to 1."}]},
        {"mode": "messages"},
    ),
}


def working_judge(request: dict[str, Any]) -> Reply:
    """Answers whatever each mode asks, always with a verdict."""
    if "input" in request:
        return embeddings(*([1.0, 0.0] for _ in request["input"]))
    text = json.dumps(request)
    if "winner" in text:
        return completion('{"reason": "r", "winner": "A"}')
    if "criteria" in text:
        return rubric_judge({"c0": 1})(request)
    return completion('{"reason": "r", "score": 1}')


@pytest.mark.parametrize("mode", list(MODES))
async def test_every_degenerate_response_is_judged(
    endpoint: JudgeEndpoint, make_judge: MakeJudge, mode: str
) -> None:
    endpoint.script = working_judge
    judge = make_judge(allow_messages_mode=True, max_prompt_bytes_per_item=1 << 22)
    reference, params = MODES[mode]
    items = [
        Item(verifier="judge", prompt="2 + 2?", response=response, reference=reference,
             params={**params, "cache": True})
        for response in DEGENERATE.values()
    ]  # fmt: skip
    results = await judge.ascore(items)
    wrong = {
        name: f"{r.status.value} {r.error}"
        for name, r in zip(DEGENERATE, results, strict=True)
        if r.status is not Status.OK
    }
    assert not wrong
