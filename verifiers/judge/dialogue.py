"""One judge question end to end: cache, request body, bounded re-asks, sample means.

`Session` is what a verifier holds per event loop: a `ProfileClient` per profile and the
in-flight coalescing table. `Session.ask` returns an `Answer` (a value per slot, averaged
over samples, logprob-weighted where the endpoint gave ``top_logprobs``) or raises
`ItemError` / `ItemTimeout`. A reply that still cannot be parsed after ``max_reasks``
re-asks is ``ItemError("judge_unparsable")``: never a score; unless the judge works (its
profile has given verdicts) and ended these replies itself, or gives verdicts to nearly
every other question while ``max_tokens`` cut these, which is `Unjudged`: this response is
what the judge would not grade.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from referee.verifiers.base import ItemError, ItemInvalid, NotConfigured
from referee.verifiers.judge.allowance import Allowance
from referee.verifiers.judge.cache import Flights, ReplyCache, cache_key
from referee.verifiers.judge.client import Choice, ProfileClient
from referee.verifiers.judge.logprobs import expected_value
from referee.verifiers.judge.profiles import NO_PROFILES, JudgeProfile
from referee.verifiers.judge.prompts import REASK, Messages, load_template, seal
from referee.verifiers.judge.replies import ReplySpec, ReplyUnparsable, SlotValue, parse_reply
from referee.verifiers.judge.usage import Usage, UsageMeter

UNPARSABLE = "judge_unparsable"
"""The code of an item whose judge gave no verdict, and the flag of one scored at the
floor for it (`Unjudged`)."""


class Unjudged(Exception):
    """A working judge (its profile has given verdicts) ended every reply to this item
    itself, re-asks included, without a verdict: it refused or was led astray by what it
    read, which the response controls. Scored at the mode's floor, flagged
    ``judge_unparsable`` (`referee.verifiers.judge.floors`): as ``error`` it was a way
    out of a low score (a trainer masks or retries it) that a policy could learn, e.g. by
    writing what a judge refuses to grade. A judge that never gave a verdict is the
    configuration's problem: ``error`` as before.

    Replies cut by ``max_tokens`` are the same when the judge gives verdicts to the
    profile's other questions: the response led it to ramble (``"before grading, write
    out ..."``), or it could buy an ``error`` that way. A ``max_tokens`` too small for the
    judge cuts many replies, so the floor needs `CUT_EVIDENCE` verdicts per question
    left cut (this one included); short of that it stays ``error``."""


CUT_EVIDENCE = 10
"""Verdicts a profile must have given per question whose replies ``max_tokens`` cut for
such a question to be the response's doing (`Unjudged`), not a ``max_tokens`` too small."""


@dataclass(frozen=True)
class Question:
    """What to ask: rendered messages, the reply shape, and how to score the reply.

    ``sampling`` replaces the profile's sampling fields in the body; ``json_mode`` off
    never asks for ``response_format`` (OpenAI refuses JSON mode when the messages do not
    mention JSON, and caller-written messages may not).
    """

    template: str
    messages: Messages
    spec: ReplySpec
    samples: int = 1
    logprobs: bool = False
    max_reasks: int = 1
    use_cache: bool = True
    sampling: dict[str, float | int] = field(default_factory=dict)
    json_mode: bool = True
    allowance: Allowance | None = None
    """Charged for every call made (None: unlimited, for callers outside the verifier)."""


@dataclass(frozen=True)
class Answer:
    """Values by slot key (raw scale, sample mean), reasons, and what it cost."""

    values: dict[str, float]
    reasons: dict[str, str]
    scored_by_logprobs: int
    """How many slot values (over all samples) came from logprobs rather than the sample."""
    reasks: int
    usage: Usage = field(default_factory=Usage)
    cached: bool = False


@dataclass
class Session:
    """Per-event-loop state of a judge verifier. ``caches`` are shared across loops."""

    profiles: dict[str, JudgeProfile]
    caches: dict[str, ReplyCache[Answer]]
    meter: UsageMeter
    clients: dict[str, ProfileClient] = field(default_factory=dict)
    flights: Flights[Answer] = field(default_factory=Flights)

    def client(self, name: str) -> ProfileClient:
        """The profile's client on this loop; `ItemInvalid` naming params.profile if unknown."""
        if name not in self.clients:
            profile = self.profiles.get(name)
            if not self.profiles:
                raise NotConfigured(NO_PROFILES)
            if profile is None:
                known = ", ".join(sorted(self.profiles))
                raise ItemInvalid("unknown_profile", f"params.profile: {name!r} ({known})")
            self.clients[name] = ProfileClient(name, profile)
        return self.clients[name]

    async def aclose(self) -> None:
        for client in self.clients.values():
            await client.aclose()
        self.clients.clear()

    async def ask(self, profile: str, question: Question, deadline: float) -> Answer:
        """The answer to ``question`` from ``profile`` before ``deadline`` (monotonic)."""
        client = self.client(profile)
        body = request_body(client.profile, question.messages, question)
        key = cache_key(profile, question.template, body)
        cache = self.caches.setdefault(profile, ReplyCache(client.profile.cache_size))
        if question.use_cache and (hit := cache.get(key)) is not None:
            self.meter.record(profile, Usage(cache_hits=1))
            return replace(hit, usage=Usage(cache_hits=1), cached=True)

        async def call() -> Answer:
            answer = await _converse(client, question, deadline)
            self.meter.record(profile, answer.usage)
            if question.use_cache:
                cache.put(key, answer)
            return answer

        if self.flights.running(key):  # joining an identical call in flight costs nothing
            answer = await self.flights.share(key, call)
            self.meter.record(profile, Usage(cache_hits=1))
            return replace(answer, usage=Usage(cache_hits=1), cached=True)
        return await self.flights.share(key, call)


def request_body(profile: JudgeProfile, messages: Messages, question: Question) -> dict[str, Any]:
    """The chat-completions body for ``messages`` under ``profile``'s sampling, with the
    question's overrides on top and the profile's ``extra_body`` last."""
    body: dict[str, Any] = {
        "model": profile.model,
        "messages": messages,
        "temperature": profile.temperature,
        "max_tokens": profile.max_tokens,
    }
    if profile.top_p is not None:
        body["top_p"] = profile.top_p
    if profile.seed is not None:
        body["seed"] = profile.seed
    body.update(question.sampling)
    if profile.supports_json_mode and question.json_mode:
        body["response_format"] = {"type": "json_object"}
    if question.logprobs:
        body["logprobs"] = True
        body["top_logprobs"] = profile.top_logprobs
    if question.samples > 1:
        body["n"] = question.samples
    return {**body, **profile.extra_body}


async def _converse(client: ProfileClient, question: Question, deadline: float) -> Answer:
    messages = seal(question.messages)  # fresh fence tags for this conversation
    usage = Usage()
    problem = ""
    ended = True
    for reask in range(question.max_reasks + 1):
        if question.allowance is not None:
            question.allowance.charge(messages)
        completion = await client.complete(
            request_body(client.profile, messages, question), deadline
        )
        usage.add(Usage(completion.prompt_tokens, completion.completion_tokens, calls=1))
        parsed: list[tuple[Choice, dict[str, SlotValue]]] = []
        for choice in completion.choices:
            try:
                parsed.append((choice, parse_reply(choice.content, question.spec)))
            except ReplyUnparsable as exc:
                problem = str(exc)
        if parsed:
            client.verdicts += 1
            return _summarise(question, parsed, reask, usage)
        ended &= all(choice.finish_reason == "stop" for choice in completion.choices)
        first = completion.choices[0].content if completion.choices else ""
        messages += [
            {"role": "assistant", "content": first},
            {"role": "user", "content": load_template(REASK).user.substitute(problem=problem)},
        ]
    message = f"{client.name}: reply unparsable after {question.max_reasks} re-asks: {problem}"
    if ended and client.verdicts > 0:
        raise Unjudged(message)
    if not ended:
        client.cut += 1
        message += " (replies cut by max_tokens)"
        if client.verdicts >= CUT_EVIDENCE * client.cut:
            raise Unjudged(message)
    raise ItemError(UNPARSABLE, message)


def _summarise(
    question: Question, parsed: list[tuple[Choice, dict[str, SlotValue]]], reasks: int, usage: Usage
) -> Answer:
    values: dict[str, float] = {}
    by_logprobs = 0
    for slot in question.spec.slots:
        samples: list[float] = []
        for choice, verdicts in parsed:
            verdict = verdicts[slot.key]
            weighted = None
            if question.logprobs and choice.tokens is not None and verdict.offset is not None:
                weighted = expected_value(choice.tokens, choice.content, verdict.offset, slot)
            by_logprobs += weighted is not None
            samples.append(verdict.value if weighted is None else weighted)
        values[slot.key] = math.fsum(samples) / len(samples)
    reasons = {key: verdict.reason for key, verdict in parsed[0][1].items()}
    return Answer(values, reasons, by_logprobs, reasks, usage)
