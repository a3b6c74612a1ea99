"""Operator caps on one judge item, checked before its first call.

The item's worst case must fit its profile's caps (`JudgeProfile`): samples, reply
length, messages mode, and calls counting every re-ask. What does not fit is
``invalid`` with code ``judge_budget`` and names the field; `verifiers.judge.allowance`
then charges the calls actually made, and the prompt bytes.
"""

from __future__ import annotations

from referee.verifiers.base import ItemInvalid
from referee.verifiers.judge.allowance import BUDGET
from referee.verifiers.judge.params import CALLER_MESSAGES, JudgeParams
from referee.verifiers.judge.profiles import JudgeProfile
from referee.verifiers.judge.prompts import Messages
from referee.verifiers.judge.rubric import Rubric, split


def require_within_caps(params: JudgeParams, rubric: Rubric, profile: JudgeProfile) -> None:
    """Raise `ItemInvalid` naming the field when ``params`` ask for more than ``profile``
    allows one item, counting the worst case of calls."""
    name = params.profile
    if params.mode in CALLER_MESSAGES and not profile.allow_messages_mode:
        raise ItemInvalid(
            BUDGET,
            f"params.mode: profile {name!r} does not allow {params.mode} mode (the caller's "
            "own messages; the operator enables it with allow_messages_mode)",
        )
    if params.samples > profile.max_samples:
        raise ItemInvalid(
            BUDGET,
            f"params.samples: {params.samples} exceeds the limit of profile {name!r} "
            f"({profile.max_samples})",
        )
    asked = params.sampling.max_tokens
    if asked is not None and asked > profile.reply_tokens_limit():
        raise ItemInvalid(
            BUDGET,
            f"params.sampling.max_tokens: {asked} exceeds the limit of profile {name!r} "
            f"({profile.reply_tokens_limit()})",
        )
    calls = questions(params, rubric) * (1 + params.max_reasks)
    if calls > profile.max_calls_per_item:
        raise ItemInvalid(
            BUDGET,
            f"params: this item may cost {calls} judge calls (questions times 1 + "
            f"max_reasks); profile {name!r} allows {profile.max_calls_per_item} per item",
        )


def require_allowed_content(messages: Messages | None, profile: JudgeProfile, name: str) -> None:
    """Raise `ItemInvalid` for an image part fetched by URL (not ``data:``) when the
    profile does not allow remote images (`JudgeProfile.allow_remote_images`)."""
    if messages is None or profile.allow_remote_images:
        return
    for index, message in enumerate(messages):
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            url = (
                str(part.get("image_url", {}).get("url", ""))
                if part.get("type") == "image_url"
                else ""
            )
            if url and not url.startswith("data:"):
                raise ItemInvalid(
                    BUDGET,
                    f"reference.messages.{index}.content: an image by URL; profile {name!r} takes "
                    "inline data: images only (the operator allows URLs with allow_remote_images)",
                )


def questions(params: JudgeParams, rubric: Rubric) -> int:
    """Distinct questions one item asks: a chunk of criteria each in explicit mode, both
    orders in pairwise, two a head on average in a tournament (N - 1 matches)."""
    if params.mode == "explicit":
        return max(1, len(split(rubric.rubric, params.criteria_per_call)))
    if params.mode in ("pairwise", "tournament"):
        return 2
    return 1
