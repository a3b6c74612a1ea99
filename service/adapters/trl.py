"""TRL: reward functions for ``GRPOTrainer(reward_funcs=...)``.

TRL calls ``f(prompts, completions, **columns)`` once per batch and masks ``None``
rewards. The scoring function logs through TRL's hooks when it passes them: the mean of
every reward component with ``log_metric`` (``referee/<component>``) and each sample's
status with ``log_extra`` (the completions table). `reward_funcs` can also return one
function per component that reads the same cached results (no second request), so TRL
logs each as ``rewards/<name>/mean``; give those ``reward_weights`` of 0.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import orjson

from referee.service.adapters.mapping import ItemMapping, group_key, row_at
from referee.service.client import loop_client
from referee.verifiers.types import Result, Status

RewardFunc = Callable[..., Coroutine[Any, Any, list[float | None]]]


class TrlRewards:
    """Scores TRL batches through one referee server; remembers the last batch's results."""

    def __init__(
        self,
        url: str,
        mapping: ItemMapping,
        api_key: str | None = None,
        deadline_s: float | None = None,
    ) -> None:
        self.url, self.api_key = url, api_key
        self.mapping = mapping
        self.deadline_s = deadline_s
        self._last: tuple[str, asyncio.Task[list[Result]]] | None = None

    async def score(
        self, prompts: Sequence[Any], completions: Sequence[Any], **columns: Any
    ) -> list[Result]:
        """Results for the batch; the scoring function and every component reader of one
        training step share one request (keyed by the batch's content, not identity)."""
        columns = {k: v for k, v in columns.items() if k not in TRL_HOOKS}
        key = batch_key(prompts, completions, columns)
        if self._last is None or self._last[0] != key:
            items = [
                self.mapping.item(prompt, completion, row_at(columns, i), group_key(prompt))
                for i, (prompt, completion) in enumerate(zip(prompts, completions, strict=True))
            ]
            client = loop_client(self.url, self.api_key)
            task = asyncio.ensure_future(client.score(items, self.deadline_s))
            self._last = (key, task)
        return await asyncio.shield(self._last[1])


TRL_HOOKS = ("trainer_state", "log_extra", "log_metric", "environments", "completion_ids")
"""Keyword arguments TRL adds that are not dataset columns."""


def log_to_trl(results: list[Result], columns: dict[str, Any]) -> None:
    """Component means via ``log_metric``; statuses via ``log_extra`` (when TRL passes them)."""
    log_metric, log_extra = columns.get("log_metric"), columns.get("log_extra")
    if callable(log_metric):
        names = sorted({name for r in results for name in r.components})
        for name in names:
            values = [r.components[name] for r in results if name in r.components]
            log_metric(f"referee/{name}", sum(values) / len(values))
    if callable(log_extra):
        log_extra("referee_status", [r.status.value for r in results])


def batch_key(prompts: Sequence[Any], completions: Sequence[Any], columns: dict[str, Any]) -> str:
    raw = orjson.dumps(
        [prompts, completions, columns],
        default=str,
        option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
    )
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def reward_funcs(
    url: str,
    mapping: ItemMapping,
    components: Sequence[str] = (),
    api_key: str | None = None,
    name: str = "referee",
    deadline_s: float | None = None,
) -> list[RewardFunc]:
    """``[reward, *component_readers]`` for ``GRPOTrainer(reward_funcs=...)``.

    The reward is the item's reward for ``ok`` results and ``None`` (masked) otherwise.
    """
    rewards = TrlRewards(url, mapping, api_key, deadline_s)

    async def reward(
        prompts: Sequence[Any], completions: Sequence[Any], **columns: Any
    ) -> list[float | None]:
        results = await rewards.score(prompts, completions, **columns)
        log_to_trl(results, columns)
        return [r.reward if r.status == Status.OK else None for r in results]

    reward.__name__ = name
    funcs: list[RewardFunc] = [reward]
    for component in components:
        funcs.append(_component_reader(rewards, component, f"{name}_{component}"))
    return funcs


def _component_reader(rewards: TrlRewards, component: str, name: str) -> RewardFunc:
    async def read(
        prompts: Sequence[Any], completions: Sequence[Any], **columns: Any
    ) -> list[float | None]:
        results = await rewards.score(prompts, completions, **columns)
        return [r.components.get(component) if r.status == Status.OK else None for r in results]

    read.__name__ = name
    return read
