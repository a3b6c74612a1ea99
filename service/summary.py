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
        self.by_status[result.status.value] += 1
        if result.status == Status.OK and result.reward is not None:
            verifier = result.verifier or "?"
            self.reward_sum[verifier] += result.reward
            self.reward_count[verifier] += 1

    def mean_rewards(self) -> dict[str, tuple[int, float]]:
        """Verifier -> (ok items, mean reward over them)."""
        return {
            name: (count, self.reward_sum[name] / count)
            for name, count in sorted(self.reward_count.items())
        }

    @property
    def total(self) -> int:
        return sum(self.by_status.values())
