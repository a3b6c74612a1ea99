"""Running totals over scored results: counts by status, mean reward by verifier."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from referee.verifiers.types import Result, Status


@dataclass
class Summary:
    by_status: Counter[str] = field(default_factory=Counter)
    reward_sum: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    reward_count: Counter[str] = field(default_factory=Counter)

    def add(self, result: Result) -> None:
        self.count(result.status.value, result.reward, result.verifier)

    def count(self, status: str, reward: float | None, verifier: str | None) -> None:
        """`add` for a result known by its fields (a results file read back, unparsed)."""
        self.by_status[status] += 1
        if status == Status.OK and reward is not None:
            name = verifier or "?"
            self.reward_sum[name] += reward
            self.reward_count[name] += 1

    def mean_rewards(self) -> dict[str, tuple[int, float]]:
        """Verifier -> (ok items, mean reward over them)."""
        return {
            name: (count, self.reward_sum[name] / count)
            for name, count in sorted(self.reward_count.items())
        }

    @property
    def total(self) -> int:
        return sum(self.by_status.values())
