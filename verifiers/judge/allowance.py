"""What one judge item may still spend on its profile's endpoint, charged per call.

The second of two checks (the first is `verifiers.judge.caps`, before any call): before
each call actually made (cache hits are free) `Allowance.charge` takes one call and the
prompt's bytes from what the profile allows the item, and raises ``invalid``
(``judge_budget``: the client asked for more than the operator allows) past it, unless
the response is what takes the call past it (`ResponseTooLong`).
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.verifiers.base import ItemInvalid
from referee.verifiers.judge.profiles import JudgeProfile
from referee.verifiers.judge.prompts import Messages, content_bytes

BUDGET = "judge_budget"
TOO_LONG = "response_too_long"


class ResponseTooLong(Exception):
    """A call goes past the item's prompt bytes only because of the response it carries
    (without it the call would fit): what the policy wrote is too long for the judge the
    operator allows. The item scores its mode's floor, flagged ``response_too_long``
    (`referee.verifiers.judge.grading.floor_result`), never ``invalid``, which would
    blame the client, stop a trainer's batch, and let a policy escape its judge by
    writing more."""


@dataclass
class Allowance:
    """Calls and prompt bytes left to one item (or one tournament group). Not
    thread-safe: one event loop charges it."""

    profile: str
    calls: int
    prompt_bytes: int
    response_bytes: int = 0
    """Bytes of the response in each call's messages (0: not told apart, as in a
    tournament, whose calls carry two members' responses)."""

    @classmethod
    def of(
        cls, name: str, profile: JudgeProfile, items: int = 1, response_bytes: int = 0
    ) -> Allowance:
        """The allowance of ``items`` items (a tournament group shares one)."""
        return cls(
            name,
            profile.max_calls_per_item * items,
            profile.max_prompt_bytes_per_item * items,
            response_bytes,
        )

    def charge(self, messages: Messages) -> None:
        """Spend one call sending ``messages``, or raise `ItemInvalid` when it would go
        past what is left."""
        size = sum(content_bytes(m) for m in messages)
        if self.calls < 1:
            raise ItemInvalid(BUDGET, f"the item used up the calls profile {self.profile!r} allows")
        if size > self.prompt_bytes:
            message = (
                f"the item's prompts exceed the max_prompt_bytes_per_item of profile "
                f"{self.profile!r} ({size} bytes for this call, {self.prompt_bytes} left)"
            )
            if self.response_bytes and size - self.response_bytes <= self.prompt_bytes:
                raise ResponseTooLong(f"{message}; {self.response_bytes} are the response's")
            raise ItemInvalid(BUDGET, message)
        self.calls -= 1
        self.prompt_bytes -= size
