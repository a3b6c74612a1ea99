"""Comparison modes: ``pairwise`` (each response against an anchor) and ``tournament``
(seeded single elimination within a group).

Every comparison is asked in both orders and averaged, cancelling the judge's position
bias: ``p = (verdict(x as A) + 1 - verdict(y as A)) / 2`` where a verdict is 1 for A, 0 for
B and 0.5 for a tie (logprob-weighted when available), so ``p`` is the chance that ``x``
beats ``y``.

Tournament: the group is shuffled by ``Random(f"{seed}:{group}")``, paired off round by
round (an odd one out gets a bye and advances), the higher ``p`` advances (an exact tie is
broken by the same generator). N items cost N - 1 matches, 2(N - 1) calls, in
``ceil(log2 N)`` rounds; an item's reward is the share of rounds it survived (the winner
1.0, first-round losers 0). Relative rewards need the whole bracket, so one failed match
fails the whole group with that status.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from referee.verifiers.base import ItemInvalid
from referee.verifiers.judge.dialogue import Answer, Question, Session
from referee.verifiers.judge.grading import answer_details, gather_all, question_for
from referee.verifiers.judge.params import JudgedItem
from referee.verifiers.judge.prompts import PAIRWISE, guidance_block, load_template, reference_block
from referee.verifiers.judge.replies import ReplySpec, Slot
from referee.verifiers.types import Result, Status

WINNER = Slot("winner", {"a": 1.0, "b": 0.0, "tie": 0.5, "response a": 1.0, "response b": 0.0})


@dataclass
class Comparison:
    """``p``: probability that the first response beats the second; both answers kept."""

    p: float
    answers: list[Answer] = field(default_factory=list)


async def compare(
    session: Session, job: JudgedItem, first: str, second: str, reference: str | None
) -> Comparison:
    """Ask ``job``'s judge about ``first`` vs ``second`` in both orders, showing
    ``reference`` (a reference answer) when given."""
    forward, backward = await gather_all(
        [
            session.ask(job.params.profile, _question(job, first, second, reference), job.deadline),
            session.ask(job.params.profile, _question(job, second, first, reference), job.deadline),
        ]
    )
    p = (forward.values["winner"] + 1.0 - backward.values["winner"]) / 2.0
    return Comparison(p=p, answers=[forward, backward])


def _question(job: JudgedItem, a: str, b: str, reference: str | None) -> Question:
    template = load_template(PAIRWISE)
    messages = template.render(
        prompt=job.item.prompt_text(),
        reference_block=reference_block(reference),
        response_a=a,
        response_b=b,
        guidance_block=guidance_block(job.rubric.rubric),
    )
    spec = ReplySpec((WINNER,), listed=False, value_key="winner")
    return question_for(job, template.version, messages, spec)


async def grade_pairwise(session: Session, job: JudgedItem) -> Result:
    """Reward: the chance the response beats the anchor (``params.anchor``, else the
    reference answer), ties counting half."""
    anchor = job.params.anchor if job.params.anchor is not None else job.rubric.answer
    if anchor is None:
        raise ItemInvalid(
            "invalid_reference", "reference.answer: pairwise mode needs it (or params.anchor)"
        )
    # The reference answer is shown as such only when it is not itself the anchor.
    shown = job.rubric.answer if job.params.anchor is not None else None
    outcome = await compare(session, job, job.item.response_text(), anchor, shown)
    details = {
        "mode": "pairwise",
        "reasons": [a.reasons.get("winner", "") for a in outcome.answers],
        **answer_details(job, load_template(PAIRWISE).version, outcome.answers, slots=2),
    }
    return Result(
        status=Status.OK, reward=outcome.p, components={"win": outcome.p}, details=details
    )


async def run_tournament(session: Session, group: str, jobs: list[JudgedItem]) -> list[Result]:
    """Results for ``jobs`` (one group, input order). Settings come from the first job."""
    if len(jobs) < 2:
        raise ItemInvalid("invalid_group", "group: tournament mode needs 2 or more items")
    lead = jobs[0]
    rng = random.Random(f"{lead.params.seed}:{group}")
    alive = list(jobs)
    rng.shuffle(alive)
    survived = {job.index: 0 for job in jobs}
    played: dict[int, list[Answer]] = {job.index: [] for job in jobs}
    bracket: list[dict[str, Any]] = []
    for round_no in range(1, math.ceil(math.log2(len(jobs))) + 1):
        pairs = [(alive[i], alive[i + 1]) for i in range(0, len(alive) - 1, 2)]
        bye = [alive[-1]] if len(alive) % 2 else []
        outcomes = await gather_all(
            [
                compare(
                    session,
                    lead,
                    x.item.response_text(),
                    y.item.response_text(),
                    lead.rubric.answer,
                )
                for x, y in pairs
            ]
        )
        winners = []
        for (x, y), outcome in zip(pairs, outcomes, strict=True):
            won = x if outcome.p > 0.5 else y if outcome.p < 0.5 else rng.choice([x, y])
            winners.append(won)
            for job in (x, y):
                played[job.index].extend(outcome.answers)
            bracket.append(
                {
                    "round": round_no,
                    "a": x.label,
                    "b": y.label,
                    "p_a": outcome.p,
                    "winner": won.label,
                }
            )
        for job in bye + winners:
            survived[job.index] += 1
        alive = bye + winners  # the bye goes first so the same item is not the odd one out again
    rounds = math.ceil(math.log2(len(jobs)))
    template = load_template(PAIRWISE).version
    return [
        _tournament_result(job, survived[job.index], rounds, played[job.index], bracket, template)
        for job in jobs
    ]


def _tournament_result(
    job: JudgedItem,
    survived: int,
    rounds: int,
    answers: list[Answer],
    bracket: list[dict[str, Any]],
    template: str,
) -> Result:
    reward = survived / rounds
    details = {
        "mode": "tournament",
        "rounds_survived": survived,
        "rounds": rounds,
        "bracket": bracket,
        **answer_details(job, template, answers, slots=len(answers)),
    }
    return Result(status=Status.OK, reward=reward, components={"rounds": reward}, details=details)
