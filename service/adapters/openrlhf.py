"""OpenRLHF: the remote reward wire format, for both the server route and a client file.

OpenRLHF posts ``{"query": [...], "prompts": [...], "labels": [...]}`` (older versions
only ``query``: prompt and response joined) and reads ``rewards``, ``scores`` and
``extra_logs``. The response is the query after its prompt, or after the part of the
prompt OpenRLHF kept when it cut a long prompt from the left (`truncation.response_of`);
a query that starts with no part of its prompt is refused, never scored whole. The
queries are decoded with their special tokens: the stop token ending the response is
dropped, and without ``prompts`` the response is the chat template's last assistant turn
when the query has one (`decoded`). Every sample must score: `RewardRequest.items`
builds the items and `reward_body` refuses to answer with numbers that hide a failure.
"""

from __future__ import annotations

import os
from typing import Any

import orjson
from pydantic import BaseModel, Field

from referee.service.adapters.decoded import last_assistant_turn, without_stop_tokens
from referee.service.adapters.mapping import ItemMapping, group_key
from referee.service.adapters.truncation import response_of
from referee.service.client import Client, RefereeError
from referee.verifiers.types import Item, Result, Status


class RewardRequest(BaseModel):
    """``POST /get_reward``, as OpenRLHF sends it."""

    query: list[str] = Field(min_length=1)
    prompts: list[str] | None = None
    labels: list[Any] | None = None

    def items(self, mapping: ItemMapping) -> list[Item]:
        """One item per query. Raises ValueError naming the field on mismatched lengths
        or on a query that does not start with (a left-truncated part of) its prompt."""
        for name in ("prompts", "labels"):
            values = getattr(self, name)
            if values is not None and len(values) != len(self.query):
                raise ValueError(f"{name}: {len(values)} entries for {len(self.query)} queries")
        items = []
        for index, query in enumerate(self.query):
            prompt = self.prompts[index] if self.prompts is not None else None
            if prompt:
                response = response_of(query, prompt)
            else:  # no prompt sent (older versions): the chat template's last assistant turn
                response = last_assistant_turn(query)
                response = query if response is None else response
            if response is None:
                raise ValueError(
                    f"query[{index}]: does not start with prompts[{index}] or a part of it "
                    "cut from the left; the response cannot be told from the prompt"
                )
            row = (
                {mapping.reference_column: self.labels[index]}
                if (self.labels is not None and mapping.reference_column)
                else {}
            )
            group = group_key(prompt) if prompt is not None else None
            items.append(mapping.item(prompt, without_stop_tokens(response), row, group))
        return items


class RewardResponse(BaseModel):
    rewards: list[float]
    scores: list[float]
    extra_logs: dict[str, list[float]]


def reward_body(results: list[Result]) -> RewardResponse:
    """OpenRLHF's answer. Components become ``extra_logs`` (one list per name)."""
    rewards = [r.reward if r.reward is not None else 0.0 for r in results]
    names = sorted({name for r in results for name in r.components})
    logs = {name: [r.components.get(name, 0.0) for r in results] for name in names}
    return RewardResponse(rewards=rewards, scores=list(rewards), extra_logs=logs)


def failures(results: list[Result]) -> tuple[list[int], list[int]]:
    """Indices of ``invalid`` results and of ``error``/``timeout`` results."""
    invalid = [i for i, r in enumerate(results) if r.status == Status.INVALID]
    failed = [i for i, r in enumerate(results) if r.status in (Status.ERROR, Status.TIMEOUT)]
    return invalid, failed


def reward_func(queries: list[str], prompts: list[str], labels: list[Any]) -> dict[str, Any]:
    """For OpenRLHF's ``--reward.remote_url path/to/file.py``: scores one batch via a server.

    Reads ``REFEREE_URL``, ``REFEREE_API_KEY`` and ``REFEREE_OPENRLHF_MAPPING`` (JSON
    `ItemMapping`, default math against ``labels``). Raises on any non-``ok`` result:
    a failed sample never becomes a reward of 0.
    """
    mapping = ItemMapping.model_validate(
        orjson.loads(os.environ.get("REFEREE_OPENRLHF_MAPPING", "{}"))
    )
    items = RewardRequest(query=queries, prompts=prompts, labels=labels).items(mapping)
    url = os.environ.get("REFEREE_URL", "http://127.0.0.1:8000")
    with Client(url, os.environ.get("REFEREE_API_KEY")) as client:
        results = client.score(items)
    bad = [i for i, r in enumerate(results) if r.status != Status.OK]
    if bad:
        first = results[bad[0]]
        message = first.error.message if first.error else first.status.value
        raise RefereeError(200, first.status.value, f"{len(bad)} samples not scored: {message}")
    body = reward_body(results).model_dump()
    try:
        import torch  # noqa: PLC0415 - optional: OpenRLHF's process has it, ours may not

        body["rewards"] = torch.tensor(body["rewards"])
        body["scores"] = torch.tensor(body["scores"])
    except ImportError:
        pass
    return body
