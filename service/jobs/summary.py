"""A job's summary, folded from its results in order and bounded whatever the job's size.

`JobSummary.add` takes one result (the JSON the results route returns) with its item's
``group`` at a time:
counts by status and by error code, per verifier a reward histogram (20 bins over [0, 1],
with the rewards below and above counted apart) and its sum, minimum and maximum, the
slowest items, the flagged items (``details.flags``), and per-group statistics: the pass
rate of every group (a reward >= 1 passes) and the share of groups whose rewards are all
equal (zero variance: no learning signal for GRPO; counted as `verifiers.groups` counts it
for ``/v1/score``, so a group of one ``ok`` item is one). Groups are folded as their items
arrive; at most `OPEN_GROUPS` are held open (trainers write a group's items together,
so a group evicted early is rare, and it is then counted as two groups, never lost).
Everything else is a fixed number of counters, so a 10-million-item job's summary is a
few kilobytes, and `to_json` / `from_json` store it beside the job with the number of
results it covers (``folded``): a restarted gateway goes on from there.
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import orjson

from referee.verifiers.groups import ZERO_VARIANCE_EPS

BINS = 20
OPEN_GROUPS = 10_000
SLOWEST = 10
FLAGGED = 50
MAX_KEYS = 64
"""Keys of a count (verifiers, error codes, flags): the first 63 by name, the rest as
``other``."""


@dataclass
class Rewards:
    """One verifier's ``ok`` rewards."""

    count: int = 0
    total: float = 0.0
    low: float = math.inf
    high: float = -math.inf
    bins: list[int] = field(default_factory=lambda: [0] * BINS)
    below: int = 0
    above: int = 0

    def add(self, reward: float) -> None:
        self.count += 1
        self.total += reward
        self.low, self.high = min(self.low, reward), max(self.high, reward)
        if reward < 0:
            self.below += 1
        elif reward > 1:
            self.above += 1
        else:
            self.bins[min(int(reward * BINS), BINS - 1)] += 1


@dataclass
class Group:
    """An open group's running sums."""

    count: int = 0
    passes: int = 0
    first: float | None = None
    varied: bool = False


@dataclass
class JobSummary:
    """See the module docstring."""

    folded: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    by_error: dict[str, int] = field(default_factory=dict)
    by_flag: dict[str, int] = field(default_factory=dict)
    rewards: dict[str, Rewards] = field(default_factory=dict)
    pass_rates: list[int] = field(default_factory=lambda: [0] * (BINS + 1))
    groups: int = 0
    zero_variance: int = 0
    slowest: list[tuple[float, int, str]] = field(default_factory=list)
    flagged: list[dict[str, Any]] = field(default_factory=list)
    open: OrderedDict[str, Group] = field(default_factory=OrderedDict)

    def add(self, result: dict[str, Any], group: str | None) -> None:
        """Fold the next result (line ``folded`` of the job) of an item of ``group``."""
        index = self.folded
        self.folded += 1
        status = str(result.get("status"))
        _bump(self.by_status, status)
        verifier = str(result.get("verifier") or "?")
        error = result.get("error") or {}
        if error:
            _bump(self.by_error, str(error.get("code")))
        reward = result.get("reward")
        if status == "ok" and isinstance(reward, int | float) and math.isfinite(reward):
            self._reward(verifier, float(reward), group)
        self._timing(float(result.get("elapsed_ms") or 0.0), index, verifier)
        flags = (result.get("details") or {}).get("flags") or []
        if isinstance(flags, list) and flags:
            for flag in flags:
                _bump(self.by_flag, str(flag))
            if len(self.flagged) < FLAGGED:
                self.flagged.append({"index": index, "verifier": verifier,
                                     "flags": [str(f) for f in flags][:8]})  # fmt: skip

    def _reward(self, verifier: str, reward: float, group: str | None) -> None:
        key = verifier if verifier in self.rewards or len(self.rewards) < MAX_KEYS - 1 else "other"
        self.rewards.setdefault(key, Rewards()).add(reward)
        if group is None:
            return
        found = self.open.pop(group, None) or Group()
        found.count += 1
        found.passes += reward >= 1.0
        spread = found.first is not None and abs(reward - found.first) > ZERO_VARIANCE_EPS
        found.varied = found.varied or spread
        found.first = reward if found.first is None else found.first
        self.open[group] = found  # most recent last
        if len(self.open) > OPEN_GROUPS:
            self._close(self.open.popitem(last=False)[1])

    def _close(self, group: Group) -> None:
        self.groups += 1
        self.pass_rates[round(group.passes / group.count * BINS)] += 1
        if not group.varied:  # as `verifiers.groups` defines it: a single ok item too
            self.zero_variance += 1

    def _timing(self, elapsed_ms: float, index: int, verifier: str) -> None:
        entry = (elapsed_ms, index, verifier)
        if len(self.slowest) < SLOWEST:
            heapq.heappush(self.slowest, entry)
        elif elapsed_ms > self.slowest[0][0]:
            heapq.heapreplace(self.slowest, entry)

    def view(self) -> dict[str, Any]:
        """The summary as the route returns it (open groups counted as they stand)."""
        closed = JobSummary(pass_rates=list(self.pass_rates), groups=self.groups,
                            zero_variance=self.zero_variance)  # fmt: skip
        for group in self.open.values():
            closed._close(group)
        return {
            "items": self.folded,
            "by_status": self.by_status,
            "by_error": self.by_error,
            "rewards": {name: _reward_view(r) for name, r in self.rewards.items()},
            "groups": {
                "count": closed.groups,
                "zero_variance": closed.zero_variance,
                "pass_rate_histogram": closed.pass_rates,
            },
            "slowest": [
                {"index": i, "elapsed_ms": ms, "verifier": v}
                for ms, i, v in sorted(self.slowest, reverse=True)
            ],
            "flags": self.by_flag,
            "flagged": self.flagged,
        }

    def to_json(self) -> dict[str, Any]:
        """Everything, for storing beside the job (`from_json` reads it back)."""
        return {
            **self.view(),
            "state": {
                "folded": self.folded,
                "rewards": {k: vars(r) for k, r in self.rewards.items()},
                "pass_rates": self.pass_rates, "groups": self.groups,
                "zero_variance": self.zero_variance, "slowest": self.slowest,
                "open": [[k, vars(g)] for k, g in self.open.items()],
            },
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JobSummary:
        state = data["state"]
        summary = cls(
            folded=state["folded"], by_status=dict(data["by_status"]),
            by_error=dict(data["by_error"]), by_flag=dict(data["flags"]),
            rewards={k: Rewards(**v) for k, v in state["rewards"].items()},
            pass_rates=list(state["pass_rates"]), groups=state["groups"],
            zero_variance=state["zero_variance"],
            slowest=[(float(ms), int(i), str(v)) for ms, i, v in state["slowest"]],
            flagged=list(data["flagged"]),
        )  # fmt: skip
        summary.open = OrderedDict((k, Group(**g)) for k, g in state["open"])
        return summary


def _bump(counts: dict[str, int], key: str) -> None:
    if key not in counts and len(counts) >= MAX_KEYS - 1:
        key = "other"
    counts[key] = counts.get(key, 0) + 1


def _reward_view(rewards: Rewards) -> dict[str, Any]:
    count = rewards.count
    return {
        "count": count,
        "mean": rewards.total / count if count else None,
        "min": rewards.low if count else None,
        "max": rewards.high if count else None,
        "histogram": rewards.bins,
        "below_0": rewards.below,
        "above_1": rewards.above,
    }


def group_of(line: bytes) -> str | None:
    """The ``group`` of an uploaded item line (None for a line that is not an item with
    a string group: it becomes an ``invalid`` result and belongs to no group)."""
    try:
        item = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    group = item.get("group") if isinstance(item, dict) else None
    return group if isinstance(group, str) else None
