"""What a response too long for its judge, or one a working judge would not grade, earns:
its mode's lowest reward.

`ResponseTooLong` (`referee.verifiers.judge.allowance`) means the operator's cap on prompt
bytes cannot carry what the policy wrote. The judge never read it, so it earned nothing:
``ok`` at the floor of the mode's reward, flagged ``response_too_long``. Not ``invalid``
(the client did nothing wrong, and a trainer stops or masks on it) and not a truncated
read (a policy would learn to pad a right answer's head with anything). The same floor,
flagged ``judge_unparsable``, for a response a working judge ended its replies to without
a verdict (`referee.verifiers.judge.dialogue.Unjudged`).
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from referee.verifiers.judge.allowance import TOO_LONG, ResponseTooLong
from referee.verifiers.judge.dialogue import UNPARSABLE, Unjudged
from referee.verifiers.judge.params import JudgedItem
from referee.verifiers.judge.rubric import aggregate
from referee.verifiers.types import Result, Status


async def floored(work: Coroutine[Any, Any, Result], job: JudgedItem) -> Result:
    """``work``'s result, or the floor of ``job``'s mode when its response was too long."""
    try:
        return await work
    except ResponseTooLong as exc:
        return floor_result(job, str(exc), TOO_LONG)
    except Unjudged as exc:
        return floor_result(job, str(exc), UNPARSABLE)


def floor_result(job: JudgedItem, reason: str, flag: str) -> Result:
    """``ok`` at the mode's floor (`floor_components`), flagged ``flag``."""
    reward, components = floor_components(job)
    details = {"mode": job.params.mode, "reason": reason, "flags": [flag]}
    return Result(status=Status.OK, reward=reward, components=components, details=details)


def floor_components(job: JudgedItem) -> tuple[float, dict[str, float]]:
    """The lowest reward of ``job``'s mode, with the components that give it: every
    criterion at its worst (a pitfall fully present; a critical one vetoes), the bottom
    of the caller's range, a failing label, a cosine of -1, a lost comparison, the
    bottom of the holistic scale."""
    mode = job.params.mode
    if mode == "explicit":
        criteria = job.rubric.rubric
        worst = {c.id: 0.0 if c.weight > 0 else 1.0 for c in criteria}
        return aggregate(criteria, worst, job.params.veto_reward).reward, worst
    if mode == "messages":
        low = float(job.params.score_range[0])
        return low, {"score": low}
    if mode == "labels":
        return 0.0, {"passed": 0.0}
    if mode == "embedding":
        return -1.0, {"cosine": -1.0}
    if mode == "pairwise":
        return 0.0, {"win": 0.0}
    return 0.0, {"score": 0.0}
