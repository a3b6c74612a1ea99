"""What one judge item may still spend on its profile's endpoint, charged per call.

The second of two checks (the first is `verifiers.judge.caps`, before any call): before
each call actually made (cache hits are free) `Allowance.charge` takes one call and the
prompt's bytes from what the profile allows the item, and raises ``invalid``
(``judge_budget``: the client asked for more than the operator allows) past it.
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.verifiers.base import ItemInvalid
from referee.verifiers.judge.profiles import JudgeProfile
from referee.verifiers.judge.prompts import Messages, content_bytes

BUDGET = "judge_budget"


@dataclass
class Allowance:
    """Calls and prompt bytes left to one item (or one tournament group). Not
    thread-safe: one event loop charges it."""

    profile: str
    calls: int
    prompt_bytes: int

    @classmethod
    def of(cls, name: str, profile: JudgeProfile, items: int = 1) -> Allowance:
        """The allowance of ``items`` items (a tournament group shares one)."""
        return cls(
            name, profile.max_calls_per_item * items, profile.max_prompt_bytes_per_item * items
        )

    def charge(self, messages: Messages) -> None:
        """Spend one call sending ``messages``, or raise `ItemInvalid` when it would go
        past what is left."""
        size = sum(content_bytes(m) for m in messages)
        if self.calls < 1:
            raise ItemInvalid(BUDGET, f"the item used up the calls profile {self.profile!r} allows")
        if size > self.prompt_bytes:
            raise ItemInvalid(
                BUDGET,
                f"the item's prompts exceed the max_prompt_bytes_per_item of profile "
                f"{self.profile!r} ({size} bytes for this call, {self.prompt_bytes} left)",
            )
        self.calls -= 1
        self.prompt_bytes -= size
