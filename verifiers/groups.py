"""Per-group statistics for GRPO-style trainers: mean, std, pass rate, dead groups."""

from __future__ import annotations

import math
from collections.abc import Sequence

from referee.verifiers.types import GroupStats, Item, Result, Status

ZERO_VARIANCE_EPS = 1e-12


def summarize_groups(
    items: Sequence[Item], results: Sequence[Result], pass_threshold: float = 1.0
) -> dict[str, GroupStats]:
    """Statistics for every ``group`` key present in ``items``.

    Only ``ok`` results contribute rewards; the others are counted in ``size`` but not in
    ``n_ok``. A group with no ``ok`` result has null statistics and ``zero_variance``
    false: it is not known to be dead, it failed to score.
    """
    rewards: dict[str, list[float]] = {}
    sizes: dict[str, int] = {}
    for item, result in zip(items, results, strict=True):
        if item.group is None:
            continue
        sizes[item.group] = sizes.get(item.group, 0) + 1
        bucket = rewards.setdefault(item.group, [])
        if result.status == Status.OK and result.reward is not None:
            bucket.append(result.reward)
    return {key: _stats(sizes[key], rewards[key], pass_threshold) for key in sizes}


def _stats(size: int, rewards: list[float], pass_threshold: float) -> GroupStats:
    if not rewards:
        return GroupStats(
            size=size, n_ok=0, mean=None, std=None, pass_rate=None, zero_variance=False
        )
    mean = math.fsum(rewards) / len(rewards)
    std = math.sqrt(math.fsum((r - mean) ** 2 for r in rewards) / len(rewards))
    passed = sum(1 for r in rewards if r >= pass_threshold)
    return GroupStats(
        size=size,
        n_ok=len(rewards),
        mean=mean,
        std=std,
        pass_rate=passed / len(rewards),
        zero_variance=std <= ZERO_VARIANCE_EPS,
    )
