"""The ``rm`` verifier: rewards from learned reward models, batched by `gpu_rm`.

Items name a model configured in ``REFEREE_RM_MODELS`` (or none, when exactly one is
configured). `ascore` encodes them in a thread, submits them to that model's in-process
batcher and awaits them, so items of concurrent requests share batches; cancelling the
await (a request deadline) drops the items before their forward pass.

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
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, Field, ValidationError

from referee.gpu_rm.batcher import DeadlineExpired, Scored
from referee.gpu_rm.encoding import Encoded, Rejected, Turn
from referee.gpu_rm.errors import RewardModelError, UnknownModel
from referee.gpu_rm.registry import ModelRegistry, ServedModel
from referee.gpu_rm.settings import RMSettings
from referee.verifiers.base import Params, describe_validation_error, echo
from referee.verifiers.types import NOT_CONFIGURED, Item, Pool, Result, Status


class RewardModelParams(Params):
    model: str | None = Field(default=None, max_length=128)
    """A name from ``REFEREE_RM_MODELS``; may be omitted when exactly one is configured."""
    truncation: Literal["keep_end", "keep_start", "reject"] = "keep_end"
    """Over-long items: drop the prompt's start (default), drop the end, or reject."""


NO_MODELS = (
    "no reward models are configured: set REFEREE_RM_MODELS, e.g. "
    """'{"main": {"path": "/models/my-rm"}}'"""
)


class RewardModelVerifier:
    """Scores (prompt, response) with a Hugging Face sequence-classification reward model.

    The reward is the configured objective's output after the model's activation; with
    several outputs (multi-objective heads) every raw output is a component. Thread-safe.
    ``registry`` overrides the process-wide one built from settings on first use.
    """

    name: ClassVar[str] = "rm"
    version: ClassVar[int] = 1
    pool: ClassVar[Pool] = Pool.GPU
    Params: ClassVar[type[BaseModel]] = RewardModelParams
    description: ClassVar[str] = (
        "Learned reward model (local Hugging Face checkpoint): dynamic batching, packed "
        "sequences, shared prompts computed once, fused Triton scoring kernel."
    )

    def __init__(self, registry: ModelRegistry | None = None) -> None:
        """``registry``: the models to serve (`EngineSettings.rm`); None: the
        environment's ``REFEREE_RM_*`` settings."""
        self._registry = registry or ModelRegistry(RMSettings())

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    def configuration_problem(self) -> str | None:
        """No model configured, or the ``gpu`` extra missing while some are."""
        registry = self._registry
        if not registry.names():
            return NO_MODELS
        missing = [name for name in ("torch", "transformers") if find_spec(name) is None]
        if missing:
            return f"the rm verifier needs the 'gpu' extra (pip install 'referee[gpu]'): {missing}"
        return None

    def health(self) -> dict[str, Any]:
        """Per configured model: loaded (with its queue), failed with the reason, or not
        loaded yet, and a ``problem`` naming models that failed or whose path holds no
        model. Never loads a model."""
        registry = self._registry
        models = registry.readiness()
        report: dict[str, Any] = {"models": models}
        failed = [f"{name}: {m['reason']}" for name, m in models.items() if m["state"] == "failed"]
        failed += [
            f"{name}: {problem}"
            for name, spec in registry.settings.models.items()
            if models[name]["state"] == "not_loaded" and (problem := spec.path_problem())
        ]
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
                f"the rm verifier needs the 'gpu' extra (pip install 'referee[gpu]'): {missing}"
            )
            failed = Result.failed(Status.ERROR, NOT_CONFIGURED, message)
            return [self._finish(item, failed.model_copy(), start) for item in items]
        registry = self._registry
        results: list[Result | None] = [None] * len(items)
        by_model: dict[str, list[tuple[int, Item, RewardModelParams]]] = {}
        for index, item in enumerate(items):
            job = _parse(item, registry)
            if isinstance(job, Result):
                results[index] = job
            else:
                by_model.setdefault(job[0], []).append((index, item, job[1]))
        await asyncio.gather(
            *(self._score_model(registry, name, jobs, results) for name, jobs in by_model.items())
        )
        return [self._finish(item, r, start) for item, r in zip(items, results, strict=True)]

    async def _score_model(
        self,
        registry: ModelRegistry,
        name: str,
        jobs: list[tuple[int, Item, RewardModelParams]],
        results: list[Result | None],
    ) -> None:
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
        encoded = await asyncio.to_thread(_encode_all, served, jobs)
        ready = [(index, enc) for index, enc in encoded if not isinstance(enc, Result)]
        for index, enc in encoded:
            if isinstance(enc, Result):
                results[index] = enc
        if not ready:
            return
        deadline = time.monotonic() + registry.settings.queue_timeout_s
        try:
            futures = served.batcher.submit([enc for _, enc in ready], deadline)
        except RewardModelError as exc:  # Overloaded: back off and retry
            for index, _ in ready:
                results[index] = Result.failed(Status.ERROR, exc.code, exc.message)
            return
        outcomes = await _await_all(futures)
        for (index, enc), outcome in zip(ready, outcomes, strict=True):
            results[index] = _result(served, name, enc, outcome)

    def _finish(self, item: Item, result: Result | None, start: float) -> Result:
        final = result or Result.failed(Status.ERROR, "verifier_failed", "item not scored")
        final.verifier = self.ref
        final.elapsed_ms = (time.monotonic() - start) * 1000.0
        return echo(final, item)


async def _await_all(futures: list[Future[Scored]]) -> list[Scored | BaseException]:
    """Await batcher futures; cancelling this cancels them (the batcher then drops them)."""
    wrapped = [asyncio.wrap_future(f) for f in futures]
    return await asyncio.gather(*wrapped, return_exceptions=True)


def _result(served: ServedModel, name: str, enc: Encoded, outcome: Any) -> Result:
    if isinstance(outcome, Scored):
        reward, outputs = served.model.reward(outcome.scores)
        details: dict[str, Any] = {
            "model": name,
            "logits": outputs,
            **enc.details,
            "batch_items": outcome.batch_items,
            "shared_prefix_tokens": outcome.shared_prefix_tokens,
        }
        components = outputs if len(outputs) > 1 else {}
        return Result(status=Status.OK, reward=reward, components=components, details=details)
    if isinstance(outcome, DeadlineExpired):
        return Result.failed(Status.TIMEOUT, "deadline", str(outcome))
    if isinstance(outcome, RewardModelError):
        return Result.failed(Status.ERROR, outcome.code, outcome.message)
    return Result.failed(Status.ERROR, "verifier_failed", f"{type(outcome).__name__}: {outcome}")


def _parse(item: Item, registry: ModelRegistry) -> tuple[str, RewardModelParams] | Result:
    try:
        params = RewardModelParams.model_validate(item.params)
    except ValidationError as exc:
        message = describe_validation_error(exc, "params")
        return Result.failed(Status.INVALID, "invalid_params", message)
    name = params.model or registry.default_name()
    if name is not None:
        return name, params
    if not registry.names():
        return Result.failed(Status.ERROR, NOT_CONFIGURED, NO_MODELS)
    known = ", ".join(registry.names())
    message = f"params.model: required when several models are served ({known})"
    return Result.failed(Status.INVALID, "invalid_params", message)


def _encode_all(
    served: ServedModel, jobs: list[tuple[int, Item, RewardModelParams]]
) -> list[tuple[int, Encoded | Result]]:
    out: list[tuple[int, Encoded | Result]] = []
    for index, item, params in jobs:
        try:
            enc = served.model.encoder.encode(
                _turns(item.prompt, "user"), _turns(item.response, "assistant"), params.truncation
            )
        except Rejected as exc:
            out.append((index, Result.failed(Status.INVALID, exc.code, exc.message)))
            continue
        out.append((index, enc))
    return out


def _turns(value: str | list[Any] | None, role: str) -> list[Turn]:
    if value is None:
        return []
    if isinstance(value, str):
        return [{"role": role, "content": value}]
    return [{"role": m.role, "content": m.content or ""} for m in value]


def _missing_dependency() -> str | None:
    """Why torch or transformers cannot be imported, or None (imports them: first use only)."""
    try:
        import torch  # noqa: F401, PLC0415 - the gpu extra, checked on first use only
        import transformers  # noqa: F401, PLC0415 - the gpu extra
    except ImportError as exc:
        return str(exc)
    return None
