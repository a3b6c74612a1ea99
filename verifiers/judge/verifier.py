"""The ``judge`` verifier: rubric LLM judges over any OpenAI-compatible endpoint.

Pool ``io``. Executors with an event loop await `JudgeVerifier.ascore`, which fans every
item's judge calls out concurrently on that loop (one pooled client per profile, shared by
all requests on the loop); `JudgeVerifier.score` runs the same on a private loop. Each item
has its own deadline (``params.deadline_s``, default ``REFEREE_JUDGE_ITEM_DEADLINE_S``)
and comes back ``timeout`` when it passes, so one slow judge never cuts a whole batch
short; ``ascore`` is also safe to cancel (nothing leaks: slots are released, shared calls
cancelled when no one waits on them).

Item contract: ``reference`` is ``{"rubric": [criteria], "answer": "..."}`` (or just the
list of criteria); ``params`` is `JudgeParams`; items of a tournament share ``group``.
In messages mode ``reference`` is ``{"messages": [{"role", "content"}]}`` (`Dialogue`):
the caller's own judge conversation, sent as it is, and the reward is the number the
judge answers, within ``params.score_range``.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Coroutine, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, ClassVar

from pydantic import BaseModel, ValidationError

from referee.verifiers.base import (
    ItemError,
    ItemInvalid,
    ItemTimeout,
    NotConfigured,
    describe_validation_error,
    echo,
    item_timeout_s,
)
from referee.verifiers.judge.allowance import Allowance
from referee.verifiers.judge.cache import ReplyCache
from referee.verifiers.judge.caps import require_allowed_content, require_within_caps
from referee.verifiers.judge.dialogue import UNPARSABLE, Answer, Session, Unjudged
from referee.verifiers.judge.embedding import grade_embedding
from referee.verifiers.judge.floors import floored
from referee.verifiers.judge.grading import (
    grade_explicit,
    grade_implicit,
    grade_labels,
    grade_messages,
)
from referee.verifiers.judge.groups import grade_pairwise, run_tournament
from referee.verifiers.judge.params import CALLER_MESSAGES, Dialogue, JudgedItem, JudgeParams
from referee.verifiers.judge.profiles import (
    NO_PROFILES,
    JudgeProfile,
    JudgeSettings,
    profile_for_model,
)
from referee.verifiers.judge.prompts import Messages, utf8
from referee.verifiers.judge.rubric import Rubric
from referee.verifiers.judge.usage import UsageCollector, UsageMeter
from referee.verifiers.rules.references import text_references
from referee.verifiers.types import NOT_CONFIGURED, Item, Pool, Result, Status

START_BATCH = 32
"""Item tasks `run_staggered` starts per event-loop turn."""


class JudgeVerifier:
    """Scores items with an LLM judge. Thread-safe; one instance serves every loop.

    ``profiles`` (name -> `JudgeProfile`) and ``item_deadline_s`` override settings; when
    ``profiles`` is None, `JudgeSettings` are read from the environment on first use.
    """

    name: ClassVar[str] = "judge"
    version: ClassVar[int] = 1
    pool: ClassVar[Pool] = Pool.IO
    Params: ClassVar[type[BaseModel]] = JudgeParams
    description: ClassVar[str] = (
        "LLM judge over an OpenAI-compatible endpoint: weighted rubrics (explicit or "
        "implicit), pairwise and tournament comparisons, logprob-weighted scores, and "
        "caller-written messages scored on a range (messages mode)."
    )

    def __init__(
        self,
        profiles: Mapping[str, JudgeProfile] | None = None,
        item_deadline_s: float | None = None,
        settings: JudgeSettings | None = None,
        settings_error: str | None = None,
    ) -> None:
        """``profiles``/``item_deadline_s`` as given (tests), else from ``settings``
        (`EngineSettings.judge`); ``settings_error``: why the settings did not parse (every
        item is then ``not_configured``). With neither, the environment's settings."""
        self._profiles = dict(profiles) if profiles is not None else None
        self._deadline_s = item_deadline_s
        self._settings = settings
        self._settings_error = settings_error
        self._lock = threading.Lock()
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Session] = (
            weakref.WeakKeyDictionary()
        )
        self._caches: dict[str, ReplyCache[Answer]] = {}
        self.meter = UsageMeter()
        """Token usage totals by profile; see `verifiers.judge.usage.UsageCollector`."""

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    def score(self, items: Sequence[Item]) -> list[Result]:
        """`ascore` on a private event loop (in a helper thread if this one runs a loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._score_privately(items))
        with ThreadPoolExecutor(max_workers=1) as helper:
            return helper.submit(asyncio.run, self._score_privately(items)).result()

    async def _score_privately(self, items: Sequence[Item]) -> list[Result]:
        try:
            return await self.ascore(items)
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP clients of the running loop (call before the loop ends)."""
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.aclose()

    async def ascore(self, items: Sequence[Item]) -> list[Result]:
        """One result per item, in order. Never raises (but may be cancelled)."""
        start = time.monotonic()
        try:
            session = self._session()
            default_deadline = self._item_deadline()
        except (ValidationError, OSError, ValueError) as exc:
            message = f"judge settings: {exc}"
            return [
                self._finish(item, Result.failed(Status.ERROR, NOT_CONFIGURED, message), start)
                for item in items
            ]
        results: list[Result | None] = [None] * len(items)
        work: list[Coroutine[Any, Any, None]] = []
        tournaments: dict[str, list[JudgedItem]] = {}
        for index, item in enumerate(items):
            job = self._prepare(index, item, session, start, default_deadline)
            if isinstance(job, Result):
                results[index] = job
            elif job.params.mode == "tournament" and item.group is not None:
                tournaments.setdefault(item.group, []).append(job)
            else:
                work.append(self._run_one(session, job, results, start))
        work += [
            self._run_group(session, group, jobs, results, start)
            for group, jobs in tournaments.items()
        ]
        await run_staggered(work)
        return [
            self._finish(item, result, start) for item, result in zip(items, results, strict=True)
        ]

    def _finish(self, item: Item, result: Result | None, start: float) -> Result:
        # Every slot is filled by construction; a None would be a bug, reported as such.
        final = result or Result.failed(Status.ERROR, "verifier_failed", "item not scored")
        final.verifier = self.ref
        final.elapsed_ms = final.elapsed_ms or (time.monotonic() - start) * 1000.0
        return echo(final, item)

    def _prepare(
        self, index: int, item: Item, session: Session, start: float, default_deadline: float
    ) -> JudgedItem | Result:
        try:
            params, rubric, messages = _validated(item, session.profiles)
            profile = session.client(params.profile).profile
        except ItemInvalid as exc:
            return Result.failed(Status.INVALID, exc.code, exc.message)
        if params.scoring == "logprobs" and not profile.supports_logprobs:
            message = f"params.scoring: profile {params.profile!r} does not support logprobs"
            return Result.failed(Status.INVALID, "invalid_params", message)
        if params.mode == "tournament" and item.group is None:
            message = "group: tournament mode needs items sharing a group"
            return Result.failed(Status.INVALID, "invalid_group", message)
        try:
            require_within_caps(params, rubric, profile)
            require_allowed_content(messages, profile, params.profile)
        except ItemInvalid as exc:
            return Result.failed(Status.INVALID, exc.code, exc.message)
        # Caller-written modes read the sampled answer: a caller's range has no token scale.
        logprobs = params.mode not in (*CALLER_MESSAGES, "embedding") and (
            params.scoring == "logprobs" or (params.scoring == "auto" and profile.supports_logprobs)
        )
        wanted = params.deadline_s or default_deadline
        limit = item_timeout_s.get()
        deadline = start + (min(wanted, limit) if limit is not None else wanted)
        response_bytes = _response_bytes(item, params, messages)
        allowance = Allowance.of(params.profile, profile, response_bytes=response_bytes)
        return JudgedItem(index, item, params, rubric, deadline, logprobs, allowance, messages)

    async def _run_one(
        self, session: Session, job: JudgedItem, results: list[Result | None], start: float
    ) -> None:
        grade = {
            "explicit": grade_explicit,
            "implicit": grade_implicit,
            "messages": grade_messages,
            "labels": grade_labels,
            "embedding": grade_embedding,
        }.get(job.params.mode, grade_pairwise)
        outcome = await _guarded(floored(grade(session, job), job), job.deadline)
        result = outcome[0] if isinstance(outcome, list) else outcome
        result.elapsed_ms = (time.monotonic() - start) * 1000.0
        results[job.index] = result

    async def _run_group(
        self,
        session: Session,
        group: str,
        jobs: list[JudgedItem],
        results: list[Result | None],
        start: float,
    ) -> None:
        # The group shares one allowance: its matches are the whole group's calls.
        lead = jobs[0]
        shared = Allowance.of(
            lead.params.profile, session.client(lead.params.profile).profile, len(jobs)
        )
        jobs = [replace(lead, allowance=shared), *jobs[1:]]
        outcome = await _guarded(run_tournament(session, group, jobs), lead.deadline)
        elapsed_ms = (time.monotonic() - start) * 1000.0
        for position, job in enumerate(jobs):
            result = (
                outcome[position] if isinstance(outcome, list) else outcome.model_copy(deep=True)
            )
            result.elapsed_ms = elapsed_ms
            results[job.index] = result

    def _session(self) -> Session:
        loop = asyncio.get_running_loop()
        with self._lock:
            session = self._sessions.get(loop)
            if session is None:
                session = Session(self._load_profiles(), self._caches, self.meter)
                self._sessions[loop] = session
            return session

    def collectors(self) -> list[Any]:
        """Token usage, calls and cache hits per profile, for ``/metrics``."""
        return [UsageCollector(self.meter)]

    def configuration_problem(self) -> str | None:
        """Unreadable judge settings, or no profile at all (`NO_PROFILES`)."""
        try:
            profiles = self._load_profiles()
        except (ValidationError, OSError, ValueError) as exc:
            return f"judge settings: {exc}"
        return None if profiles else NO_PROFILES

    def _load_profiles(self) -> dict[str, JudgeProfile]:
        if self._profiles is None:
            settings = self._judge_settings()
            self._profiles = settings.all_profiles()
            self._deadline_s = self._deadline_s or settings.item_deadline_s
        return self._profiles

    def _judge_settings(self) -> JudgeSettings:
        if self._settings_error is not None:
            raise ValueError(self._settings_error.removeprefix("judge settings: "))
        if self._settings is None:
            self._settings = JudgeSettings()
        return self._settings

    def _item_deadline(self) -> float:
        if self._deadline_s is None:
            self._deadline_s = self._judge_settings().item_deadline_s
        return self._deadline_s


def _validated(
    item: Item, profiles: Mapping[str, JudgeProfile]
) -> tuple[JudgeParams, Rubric, Messages | None]:
    """The item's params (``profile`` resolved from ``model``), rubric and, in messages
    mode, the caller's messages; raises `ItemInvalid` naming the offending field."""
    try:
        params = JudgeParams.model_validate(item.params)
    except ValidationError as exc:
        raise ItemInvalid("invalid_params", describe_validation_error(exc, "params")) from None
    messages: Messages | None = None
    try:
        if params.mode in CALLER_MESSAGES:
            rubric, messages = Rubric(), Dialogue.model_validate(item.reference).as_messages()
        elif params.mode == "embedding":
            rubric = Rubric()
            text_references(item.reference)  # checked here; read again when graded
        else:
            rubric = Rubric.model_validate(item.reference)
    except ValidationError as exc:
        message = describe_validation_error(exc, "reference")
        raise ItemInvalid("invalid_reference", message) from None
    return _resolved(params, profiles), rubric, messages


TRACKED_RESPONSE_CHARS = 64
"""In the caller's messages, a response is told apart by finding it; a shorter one could
be found where the caller wrote the same words."""


def _response_bytes(item: Item, params: JudgeParams, messages: Messages | None) -> int:
    """Bytes of the response in each of the item's calls, so the allowance can tell a
    response too long for the judge from a request too big for it (`ResponseTooLong`).
    Our templates carry it once; the caller's messages as many times as they hold it.
    A tournament's calls carry two members' responses: not told apart there."""
    if params.mode == "tournament":
        return 0
    response = item.response_text()
    size = len(utf8(response))
    if messages is None:
        return size
    if len(response) < TRACKED_RESPONSE_CHARS:
        return 0
    return size * sum(_texts(message).count(response) for message in messages)


def _texts(message: dict[str, Any]) -> str:
    """A message's text: its content, or its text parts' (newline-joined)."""
    content = message.get("content", "")
    if isinstance(content, str):
        return content
    return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))


def _resolved(params: JudgeParams, profiles: Mapping[str, JudgeProfile]) -> JudgeParams:
    """``params`` with ``profile`` set to the one serving ``params.model`` (if given)."""
    if params.model is None:
        return params
    if not profiles:
        raise NotConfigured(NO_PROFILES)
    name = profile_for_model(profiles, params.model)
    if name is None:
        known = ", ".join(sorted(profiles))
        message = (
            f"params.model: no judge profile is named {params.model!r} or serves it, "
            f"and there is no 'default' profile (profiles: {known})"
        )
        raise ItemInvalid("unknown_model", message)
    return params.model_copy(update={"profile": name})


async def run_staggered(work: Sequence[Coroutine[Any, Any, None]]) -> None:
    """Run ``work`` concurrently, starting `START_BATCH` coroutines per event-loop turn.

    An item does its own preparation (render the prompt, hash the cache key) when its task
    first runs, and its request reaches the socket only some loop turns later; starting
    every task at once would hold the first request back until every item of the batch
    was prepared (0.8 s for 2,000 items), while starting them a batch per turn overlaps
    the later items' preparation with the first requests' wait for the judge. Cancelled,
    it cancels and awaits the started tasks and closes the rest.
    """
    tasks: list[asyncio.Task[None]] = []
    try:
        for first in range(0, len(work), START_BATCH):
            tasks += [asyncio.ensure_future(w) for w in work[first : first + START_BATCH]]
            await asyncio.sleep(0)
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        for unstarted in work[len(tasks) :]:
            unstarted.close()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _guarded(
    work: Coroutine[Any, Any, Result | list[Result]], deadline: float
) -> Result | list[Result]:
    """``work``'s result, or the failed `Result` its exception or the deadline means."""
    try:
        async with asyncio.timeout(max(deadline - time.monotonic(), 0)):
            return await work
    except ItemInvalid as exc:
        return Result.failed(Status.INVALID, exc.code, exc.message)
    except Unjudged as exc:  # a tournament's: whose response it was is not told apart
        return Result.failed(Status.ERROR, UNPARSABLE, str(exc))
    except ItemError as exc:
        return Result.failed(Status.ERROR, exc.code, exc.message, retryable=exc.retryable)
    except (ItemTimeout, TimeoutError) as exc:
        message = exc.message if isinstance(exc, ItemTimeout) else "the item deadline passed"
        return Result.failed(Status.TIMEOUT, "deadline", message)
    except Exception as exc:  # noqa: BLE001 - a judge bug must not lose the batch
        return Result.failed(Status.ERROR, "verifier_failed", f"{type(exc).__name__}: {exc}")
