"""What the verifiers over local models (``rm``, ``grm``, ``prm``) share: items to a
model's in-process batcher and back.

`ascore` validates each item's params, picks its model (the item's ``params.model``, or
the only configured model with a head this verifier reads), encodes items in a thread,
submits them to that model's batcher (`gpu_rm.batcher`) and awaits them, so items of
concurrent requests share batches; cancelling the await (a request deadline) drops the
items before their forward pass. A subclass says which heads it reads, how an item is
encoded and what a scored item's result is.

torch and transformers are optional (the ``gpu`` extra): `gpu_rm.registry` imports them
with the first model it loads, and without them every item is ``error`` with code
``not_configured``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from importlib.util import find_spec
from typing import Any, ClassVar

from pydantic import BaseModel, Field, ValidationError

from referee.gpu_rm.batcher import DeadlineExpired, Scored
from referee.gpu_rm.encoding import Encoded, Rejected, Truncation, Turn, Unearned
from referee.gpu_rm.errors import RewardModelError, UnknownModel
from referee.gpu_rm.registry import ModelRegistry, ServedModel
from referee.gpu_rm.settings import HeadKind, RMSettings
from referee.verifiers.base import Params, describe_validation_error, echo
from referee.verifiers.types import NOT_CONFIGURED, Item, Pool, Result, Status

NO_MODELS = (
    "no {kind} models are configured: set REFEREE_RM_MODELS, e.g. "
    """'{{"main": {{"path": "/models/my-model", "head": "{head}"}}}}'"""
)


class ModelParams(Params):
    model: str | None = Field(default=None, max_length=128)
    """A name from ``REFEREE_RM_MODELS``; may be omitted when exactly one model with a
    head this verifier reads is configured."""
    truncation: Truncation = "keep_end"
    """Over-long items: drop the prompt's start (default), drop the end, or reject; a
    policy that would cut a scored token makes the item invalid (``too_long``)."""


Job = tuple[int, Item, Any]
Submission = tuple[ServedModel, Encoded]
"""A sequence to read and the model that reads it."""


class BatchedModelVerifier:
    """The shared machinery; see the module docstring. Thread-safe."""

    name: ClassVar[str]
    version: ClassVar[int] = 1
    pool: ClassVar[Pool] = Pool.GPU
    Params: ClassVar[type[BaseModel]] = ModelParams
    description: ClassVar[str]
    heads: ClassVar[tuple[HeadKind, ...]]
    """The `ModelSpec.head` kinds this verifier reads."""
    kind: ClassVar[str]
    """What its models are called in messages ("reward", "generative reward", ...)."""

    def __init__(self, registry: ModelRegistry | None = None) -> None:
        """``registry``: the models to serve (shared by the model verifiers, so a model
        has one batcher); None: the environment's ``REFEREE_RM_*`` settings."""
        self._registry = registry or ModelRegistry(RMSettings())
        self._same_vocabulary: dict[tuple[str, str], bool] = {}

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    def model_names(self) -> list[str]:
        """The configured models with a head this verifier reads."""
        models = self._registry.settings.models
        return [name for name, spec in models.items() if spec.head in self.heads]

    def configuration_problem(self) -> str | None:
        """No suitable model configured, or the ``gpu`` extra missing while some are."""
        if not self.model_names():
            return NO_MODELS.format(kind=self.kind, head=self.heads[0])
        missing = [name for name in ("torch", "transformers") if find_spec(name) is None]
        if missing:
            extra = "the 'gpu' extra (pip install 'referee[gpu]')"
            return f"the {self.name} verifier needs {extra}: {missing}"
        return None

    def health(self) -> dict[str, Any]:
        """Per suitable model: loaded (with its queue), failed with the reason, or not
        loaded yet, and a ``problem`` naming models that failed or whose path holds no
        model. Never loads a model."""
        names = self.model_names()
        readiness = self._registry.readiness()
        models = {name: readiness[name] for name in names}
        specs = self._registry.settings.models
        failed = [f"{name}: {m['reason']}" for name, m in models.items() if m["state"] == "failed"]
        failed += [
            f"{name}: {problem}"
            for name in names
            if models[name]["state"] == "not_loaded" and (problem := specs[name].path_problem())
        ]
        report: dict[str, Any] = {"models": models}
        if failed:
            report["problem"] = "; ".join(failed)
        return report

    def saturated(self) -> bool:
        """True while a model's batcher queue is full (the gateway answers 429)."""
        return self._registry.saturated()

    def score(self, items: Sequence[Item]) -> list[Result]:
        """`ascore` on a private event loop (in a helper thread if this one runs a loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.ascore(items))
        with ThreadPoolExecutor(max_workers=1) as helper:
            return helper.submit(asyncio.run, self.ascore(items)).result()

    async def ascore(self, items: Sequence[Item]) -> list[Result]:
        """One result per item, in order. Never raises (but may be cancelled)."""
        start = time.monotonic()
        missing = _missing_dependency()
        if missing is not None:
            message = (
                f"the {self.name} verifier needs the 'gpu' extra (pip install 'referee[gpu]'): "
                f"{missing}"
            )
            failed = Result.failed(Status.ERROR, NOT_CONFIGURED, message)
            return [self._finish(item, failed.model_copy(), start) for item in items]
        results: list[Result | None] = [None] * len(items)
        by_model: dict[str, list[Job]] = {}
        for index, item in enumerate(items):
            job = self._parse(item)
            if isinstance(job, Result):
                results[index] = job
            else:
                by_model.setdefault(job[0], []).append((index, item, job[1]))
        await asyncio.gather(
            *(self._score_model(name, jobs, results) for name, jobs in by_model.items())
        )
        return [self._finish(item, r, start) for item, r in zip(items, results, strict=True)]

    def encode(self, served: ServedModel, item: Item, params: Any) -> Encoded:
        """The item's tokens for ``served``; raises `Rejected` (``invalid``) or
        `RewardModelError` (``error``)."""
        raise NotImplementedError

    def submissions(self, served: ServedModel, item: Item, params: Any) -> list[Submission]:
        """Every sequence to read for ``item``, each with the model that reads it (by
        default its one `encode` on ``served``). Same errors as `encode`."""
        return [(served, self.encode(served, item, params))]

    def interpret(self, served: ServedModel, enc: Encoded, scored: Scored, params: Any) -> Result:
        """The ``ok`` result of an item read once."""
        raise NotImplementedError

    def floor(self, served: ServedModel, params: Any) -> float | None:
        """The lowest reward, earned by a response a model has nothing to read in, or one
        too long to read (`Unearned`); None when the reward has no floor (the item is then
        ``invalid``)."""
        return None

    def unearned(self, failure: Unearned, served: ServedModel, params: Any) -> Result:
        """The result of a response with nothing to read: ``ok`` at `floor`, flagged."""
        floor = self.floor(served, params)
        if floor is None:
            return Result.failed(Status.INVALID, failure.code, failure.message)
        details = {"flags": [failure.code], "reason": failure.message}
        return Result(status=Status.OK, reward=floor, details=details)

    def interpret_all(
        self, submitted: list[Submission], scored: list[Scored], params: Any
    ) -> Result:
        """The ``ok`` result from every submission's reading (by default, `interpret`)."""
        (served, enc), (one, *_) = submitted[0], scored
        return self.interpret(served, enc, one, params)

    def companion(self, served: ServedModel, name: str) -> ServedModel:
        """A second model read alongside ``served`` (loaded here, in the encoding
        thread): one with a head this verifier reads and the same vocabulary, so the
        same token ids mean the same text. `Rejected` names ``params.compare_model``."""
        spec = self._registry.settings.models.get(name)
        if spec is None or spec.head not in self.heads:
            raise Rejected("invalid_params", f"params.compare_model: {name!r} is not a "
                           f"configured {' or '.join(self.heads)} model")  # fmt: skip
        other = self._registry.get(name)
        key = (served.model.name, name)
        if key not in self._same_vocabulary:
            ours, theirs = served.model.tokenizer, other.model.tokenizer
            self._same_vocabulary[key] = ours.get_vocab() == theirs.get_vocab()
        if not self._same_vocabulary[key]:
            raise Rejected("invalid_params", f"params.compare_model: {name!r} has another "
                           "vocabulary than params.model")  # fmt: skip
        return other

    async def _score_model(self, name: str, jobs: list[Job], results: list[Result | None]) -> None:
        registry = self._registry
        try:
            served = await asyncio.to_thread(registry.get, name)
        except RewardModelError as exc:
            for index, _, _ in jobs:
                results[index] = (
                    Result.failed(Status.INVALID, exc.code, exc.message)
                    if isinstance(exc, UnknownModel)
                    else Result.failed(Status.ERROR, exc.code, exc.message)
                )
            return
        encoded = await asyncio.to_thread(self._encode_all, served, jobs)
        ready: list[tuple[int, list[Submission], Any]] = []
        for index, found, params in encoded:
            if isinstance(found, Result):
                results[index] = found
            else:
                ready.append((index, found, params))
        if not ready:
            return
        deadline = time.monotonic() + registry.settings.queue_timeout_s
        futures = _submit(ready, deadline, results)
        outcomes = await _await_all([f for fs in futures.values() for f in fs])
        taken = 0
        for index, submitted, params in ready:
            if index not in futures:
                continue
            mine = outcomes[taken : taken + len(submitted)]
            taken += len(submitted)
            results[index] = self._outcome(name, submitted, mine, params)

    def _outcome(
        self, name: str, submitted: list[Submission], outcomes: list[Any], params: Any
    ) -> Result:
        failed = next((o for o in outcomes if not isinstance(o, Scored)), None)
        if failed is None:
            result = self.interpret_all(submitted, outcomes, params)
            first, enc = outcomes[0], submitted[0][1]
            details = {"model": name, **enc.details, "batch_items": first.batch_items,
                       "shared_prefix_tokens": first.shared_prefix_tokens}  # fmt: skip
            result.details = {**details, **result.details}
            return result
        if isinstance(failed, DeadlineExpired):
            return Result.failed(Status.TIMEOUT, "deadline", str(failed))
        if isinstance(failed, RewardModelError):
            return Result.failed(Status.ERROR, failed.code, failed.message)
        message = f"{type(failed).__name__}: {failed}"
        return Result.failed(Status.ERROR, "verifier_failed", message)

    def _encode_all(self, served: ServedModel, jobs: list[Job]) -> list[tuple[int, Any, Any]]:
        out: list[tuple[int, Any, Any]] = []
        for index, item, params in jobs:
            try:
                out.append((index, self.submissions(served, item, params), params))
            except Rejected as exc:
                out.append((index, Result.failed(Status.INVALID, exc.code, exc.message), params))
            except Unearned as exc:
                out.append((index, self.unearned(exc, served, params), params))
            except RewardModelError as exc:  # a companion model that cannot load, say
                out.append((index, Result.failed(Status.ERROR, exc.code, exc.message), params))
        return out

    def _parse(self, item: Item) -> tuple[str, Any] | Result:
        try:
            params = self.Params.model_validate(item.params)
        except ValidationError as exc:
            message = describe_validation_error(exc, "params")
            return Result.failed(Status.INVALID, "invalid_params", message)
        names = self.model_names()
        name = getattr(params, "model", None) or (names[0] if len(names) == 1 else None)
        if name is not None:
            spec = self._registry.settings.models.get(name)
            if spec is not None and spec.head not in self.heads:
                message = (f"params.model: {name!r} has a {spec.head!r} head; the {self.name} "
                           f"verifier reads {' or '.join(self.heads)} heads")  # fmt: skip
                return Result.failed(Status.INVALID, "invalid_params", message)
            return name, params
        if not names:
            message = NO_MODELS.format(kind=self.kind, head=self.heads[0])
            return Result.failed(Status.ERROR, NOT_CONFIGURED, message)
        message = f"params.model: required when several models are served ({', '.join(names)})"
        return Result.failed(Status.INVALID, "invalid_params", message)

    def _finish(self, item: Item, result: Result | None, start: float) -> Result:
        final = result or Result.failed(Status.ERROR, "verifier_failed", "item not scored")
        final.verifier = self.ref
        final.elapsed_ms = (time.monotonic() - start) * 1000.0
        return echo(final, item)


def _submit(
    ready: list[tuple[int, list[Submission], Any]], deadline: float, results: list[Result | None]
) -> dict[int, list[Future[Scored]]]:
    """Queue every submission on its model's batcher (one call per model), and return
    each item's futures in submission order. An item a batcher refuses (``overloaded``:
    back off and retry) gets that error, and its other submissions are withdrawn."""
    by_model: dict[int, tuple[ServedModel, list[tuple[int, int, Encoded]]]] = {}
    for index, submitted, _ in ready:
        for position, (served, enc) in enumerate(submitted):
            by_model.setdefault(id(served), (served, []))[1].append((index, position, enc))
    slots: dict[int, list[Future[Scored] | None]] = {i: [None] * len(s) for i, s, _ in ready}
    refused: set[int] = set()
    for served, entries in by_model.values():
        try:
            queued = served.batcher.submit([enc for _, _, enc in entries], deadline)
        except RewardModelError as exc:
            for index, _, _ in entries:
                results[index] = Result.failed(Status.ERROR, exc.code, exc.message)
                refused.add(index)
            continue
        for (index, position, _), future in zip(entries, queued, strict=True):
            slots[index][position] = future
    for index in refused:
        for withdrawn in slots.pop(index):
            if withdrawn is not None:
                withdrawn.cancel()
    return {index: [f for f in found if f is not None] for index, found in slots.items()}


async def _await_all(futures: list[Future[Scored]]) -> list[Scored | BaseException]:
    """Await batcher futures; cancelling this cancels them (the batcher then drops them)."""
    wrapped = [asyncio.wrap_future(f) for f in futures]
    return await asyncio.gather(*wrapped, return_exceptions=True)


def turns(value: str | list[Any] | None, role: str) -> list[Turn]:
    """An item's prompt or response as chat turns (a string is one turn of ``role``)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"role": role, "content": value}]
    return [{"role": m.role, "content": m.content or ""} for m in value]


def transcript(value: str | list[Any] | None) -> str:
    """An item's prompt as one text: a string as it is, chat turns as ``role: content``
    paragraphs."""
    found = turns(value, "user")
    if len(found) == 1:
        return found[0]["content"]
    return "\n\n".join(f"{turn['role']}: {turn['content']}" for turn in found)


def reply(value: str | list[Any] | None) -> str:
    """An item's response as one text: a string as it is, chat turns as their assistant
    turns' contents (every turn's when none is the assistant's)."""
    found = turns(value, "assistant")
    mine = [turn for turn in found if turn["role"] == "assistant"] or found
    return "\n\n".join(turn["content"] for turn in mine)


def _missing_dependency() -> str | None:
    """Why torch or transformers cannot be imported, or None (imports them: first use only)."""
    try:
        import torch  # noqa: F401, PLC0415 - the gpu extra, checked on first use only
        import transformers  # noqa: F401, PLC0415 - the gpu extra
    except ImportError as exc:
        return str(exc)
    return None
