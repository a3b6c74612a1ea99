"""Single-response modes: ``explicit`` (a verdict per criterion), ``implicit`` (one
holistic score) and ``messages`` (the caller's own conversation, one number). Each
returns an ``ok`` `Result` or raises `ItemInvalid`/`ItemError`/`ItemTimeout`; the
verifier turns those into statuses."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from referee.verifiers.base import ItemError, ItemInvalid, ItemTimeout
from referee.verifiers.judge.dialogue import Answer, Question, Session
from referee.verifiers.judge.params import JudgedItem
from referee.verifiers.judge.prompts import (
    EXPLICIT,
    IMPLICIT,
    describe_criteria,
    guidance_block,
    load_template,
    messages_version,
    reference_block,
)
from referee.verifiers.judge.replies import ReplySpec, Slot
from referee.verifiers.judge.rubric import Criterion, aggregate, split
from referee.verifiers.judge.usage import Usage
from referee.verifiers.types import Result, Status

T = TypeVar("T")


async def grade_explicit(session: Session, job: JudgedItem) -> Result:
    """Reward ``sum(w*s)/sum(|w|)`` with the critical veto (see `rubric.aggregate`)."""
    criteria = job.rubric.rubric
    if not criteria:
        raise ItemInvalid("invalid_reference", "reference.rubric: explicit mode needs criteria")
    template = load_template(EXPLICIT)
    chunks = split(criteria, job.params.criteria_per_call)
    answers = await gather_all(
        [
            session.ask(job.params.profile, _explicit_question(job, chunk), job.deadline)
            for chunk in chunks
        ]
    )
    raw = {key: value for answer in answers for key, value in answer.values.items()}
    scores = {c.id: c.normalise(raw[c.id]) for c in criteria}
    outcome = aggregate(criteria, scores, job.params.veto_reward)
    details = {
        "mode": "explicit",
        "raw_scores": {c.id: raw[c.id] for c in criteria},
        "reasons": {key: r for answer in answers for key, r in answer.reasons.items()},
        "vetoed_by": outcome.vetoed_by,
        **answer_details(job, template.version, answers, slots=len(criteria)),
    }
    return Result(status=Status.OK, reward=outcome.reward, components=scores, details=details)


def _explicit_question(job: JudgedItem, chunk: Sequence[Criterion]) -> Question:
    messages = load_template(EXPLICIT).render(
        prompt=job.item.prompt_text(),
        response=job.item.response_text(),
        reference_block=reference_block(job.rubric.answer),
        criteria=describe_criteria(chunk),
    )
    slots = tuple(Slot(c.id, c.scale(), _bounds(c)) for c in chunk)
    return question_for(
        job, load_template(EXPLICIT).version, messages, ReplySpec(slots, listed=True)
    )


def _bounds(criterion: Criterion) -> tuple[float, float] | None:
    return criterion.bounds() if criterion.kind == "likert" else None


async def grade_implicit(session: Session, job: JudgedItem) -> Result:
    """Reward ``(score - scale_min) / (scale_max - scale_min)`` from one holistic score."""
    low, high = job.params.scale_min, job.params.scale_max
    template = load_template(IMPLICIT)
    messages = template.render(
        prompt=job.item.prompt_text(),
        response=job.item.response_text(),
        reference_block=reference_block(job.rubric.answer),
        guidance_block=guidance_block(job.rubric.rubric),
        scale_min=str(low),
        scale_max=str(high),
    )
    slot = Slot("score", {str(v): float(v) for v in range(low, high + 1)}, (low, high))
    question = question_for(job, template.version, messages, ReplySpec((slot,), listed=False))
    answer = await session.ask(job.params.profile, question, job.deadline)
    score = answer.values["score"]
    reward = (score - low) / (high - low)
    details = {
        "mode": "implicit",
        "raw_score": score,
        "reason": answer.reasons.get("score", ""),
        **answer_details(job, template.version, [answer], slots=1),
    }
    return Result(status=Status.OK, reward=reward, components={"score": reward}, details=details)


# Keys a caller's prompt may ask the score under besides "score"; OpenAI's own score
# model graders answer {"result": ...}.
_MESSAGES_ALIASES = ("result", "rating", "value")


async def grade_messages(session: Session, job: JudgedItem) -> Result:
    """Reward: the number the judge answers to the caller's messages, on
    ``params.score_range`` as it is (not normalised; out of range is never clamped)."""
    if job.messages is None:  # _prepare fills it in messages mode; guard the contract
        raise ItemInvalid("invalid_reference", "reference.messages: messages mode needs them")
    low, high = job.params.score_range
    version = messages_version(job.messages)
    spec = ReplySpec((Slot("score", {}, (low, high)),), listed=False, aliases=_MESSAGES_ALIASES)
    question = replace(question_for(job, version, job.messages, spec), json_mode=False)
    answer = await session.ask(job.params.profile, question, job.deadline)
    score = answer.values["score"]
    details = {
        "mode": "messages",
        "raw_score": score,
        "score_range": [low, high],
        "reason": answer.reasons.get("score", ""),
        **answer_details(job, version, [answer], slots=1),
    }
    return Result(status=Status.OK, reward=score, components={"score": score}, details=details)


async def grade_labels(session: Session, job: JudgedItem) -> Result:
    """Reward: 1 when the label the judge answers to the caller's messages is one of
    ``params.passing_labels``, else 0 (OpenAI's ``label_model``). A reply that is none of
    ``params.labels`` is re-asked, then ``error``."""
    if job.messages is None or not job.params.labels or not job.params.passing_labels:
        raise ItemInvalid("invalid_params", "params.labels: labels mode needs labels")
    labels = job.params.labels
    scale = {label.strip().lower(): float(index) for index, label in enumerate(labels)}
    spec = ReplySpec((Slot("label", scale),), listed=False, value_key="label", aliases=_LABEL_KEYS)
    version = messages_version(job.messages)
    question = replace(question_for(job, version, job.messages, spec), json_mode=False)
    answer = await session.ask(job.params.profile, question, job.deadline)
    label = labels[int(answer.values["label"])]
    passed = float(label in job.params.passing_labels)
    details = {
        "mode": "labels",
        "label": label,
        "passed": bool(passed),
        "reason": answer.reasons.get("label", ""),
        **answer_details(job, version, [answer], slots=1),
    }
    return Result(status=Status.OK, reward=passed, components={"passed": passed}, details=details)


_LABEL_KEYS = ("result", "value", "answer", "classification")


def question_for(
    job: JudgedItem, template: str, messages: list[dict[str, str]], spec: ReplySpec
) -> Question:
    """The `Question` for ``messages``, with the item's sampling, caching and re-ask params
    (every mode builds its calls here)."""
    return Question(
        template=template,
        messages=messages,
        spec=spec,
        samples=job.params.samples,
        logprobs=job.logprobs,
        max_reasks=job.params.max_reasks,
        use_cache=job.params.cache,
        sampling=job.params.sampling.overrides(),
        allowance=job.allowance,
    )


def answer_details(
    job: JudgedItem, template: str, answers: Sequence[Answer], slots: int
) -> dict[str, Any]:
    """The details every mode reports: template version, profile, scoring, cost."""
    usage = Usage()
    for answer in answers:
        usage.add(answer.usage)
    by_logprobs = sum(a.scored_by_logprobs for a in answers)
    total = slots * job.params.samples
    scoring = "logprobs" if by_logprobs == total else "sample" if by_logprobs == 0 else "mixed"
    return {
        "template": template,
        "profile": job.params.profile,
        "scoring": scoring,
        "samples": job.params.samples,
        "reasks": sum(a.reasks for a in answers),
        "cached": all(a.cached for a in answers),
        "usage": usage.as_dict(),
    }


_PRECEDENCE = (ItemInvalid, ItemError, ItemTimeout)


async def gather_all(calls: Sequence[Awaitable[T]]) -> list[T]:
    """Await all ``calls`` concurrently; on the first failure cancel the rest and raise it
    (``invalid`` before ``error`` before ``timeout`` when several fail together)."""
    if len(calls) == 1:
        # The usual case (one chunk): awaited in place, which spares a task per item.
        return [await calls[0]]
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_awaited(call)) for call in calls]
    except BaseExceptionGroup as failures:
        for kind in _PRECEDENCE:
            for exc in failures.exceptions:
                if isinstance(exc, kind):
                    raise exc from None
        raise failures.exceptions[0] from None
    return [task.result() for task in tasks]


async def _awaited(call: Awaitable[T]) -> T:
    return await call
