"""The verifier contract and a base class for verifiers that score items one at a time.

A verifier is anything with ``name``, ``version``, ``pool``, ``Params`` and a batch method
``score(items) -> list[Result]`` returning one result per item, in order. Batch-first on
purpose: a GPU batches, a judge fans out, a math verifier parses one gold per group.

Verifiers never raise for a single bad item: they return a per-item result. The
exceptions below are how the per-item helper (`ItemVerifier.check`) says "invalid" or
"error"; `ItemVerifier.score` turns them into results.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from referee.verifiers.reference_cache import ReferenceCache
from referee.verifiers.types import NOT_CONFIGURED, Item, Pool, Result, Status

item_timeout_s: ContextVar[float | None] = ContextVar("referee_item_timeout_s", default=None)
"""The executor's per-item limit (seconds) while a verifier runs (None: no executor, a
library call). Process pools kill an item past it on their own; a verifier with internal
deadlines (a judge) caps them at this so its items come back ``timeout`` per item, not
cut off together, and one that runs many steps (the code verifier's test cases) paces
them to finish within it."""

#: Share of the item timeout that a verifier's own sandbox runs may take together: the
#: rest is the sandbox's start-up and the result's way back.
RUNS_SHARE = 0.8


#: The shortest run worth starting to place a failure (`rerun_limit`).
MIN_RERUN_S = 0.5


def run_limit(seconds: float) -> float:
    """A sandbox run's time limit: ``seconds``, shortened to end within `RUNS_SHARE` of
    the executor's item timeout (unchanged in a library call), so that a program that
    never ends fails its run instead of timing the item out."""
    limit = item_timeout_s.get()
    return seconds if limit is None else min(seconds, RUNS_SHARE * limit)


#: Of `run_limit`'s share of the item timeout, what a run whose failure a second run may
#: have to place takes (`placed_run_limit`): the rest is the second run's.
PLACED_RUN_SHARE = 0.7


def placed_run_limit(seconds: float) -> float:
    """The time limit of a run whose failure a second run may have to place (a grader or
    checker that a response broke, or one broken for every input? `rerun_limit`):
    ``seconds``, shortened to `PLACED_RUN_SHARE` of `run_limit`'s share of the item
    timeout, so that a response on which the first run never ends leaves the second its
    time. The second run's limit is then never longer than the first's: a first run that
    ran out of time while the second gives a verdict is evidence against the response."""
    limit = item_timeout_s.get()
    return seconds if limit is None else min(seconds, PLACED_RUN_SHARE * RUNS_SHARE * limit)


def runs_end(since: float, share: float = RUNS_SHARE) -> float | None:
    """When runs begun at ``since`` (a `time.monotonic` instant) must have ended: at
    ``share`` of the item timeout; None in a library call (no executor)."""
    limit = item_timeout_s.get()
    return None if limit is None else since + share * limit


def time_left(seconds: float, since: float) -> float:
    """``seconds``, or what is left of `RUNS_SHARE` of the item timeout since ``since`` (a
    `time.monotonic` instant) if less (never under 0.01 s): the limit of one step of
    several that must together end in time (unchanged in a library call)."""
    limit = item_timeout_s.get()
    if limit is None:
        return seconds
    return max(min(seconds, RUNS_SHARE * limit - (time.monotonic() - since)), 0.01)


def rerun_limit(seconds: float, since: float) -> float | None:
    """The time limit of a second run, started to place a failure of the first (a grader
    or checker that a response broke, or one broken for every input?): ``seconds``, or
    what is left of `RUNS_SHARE` of the item timeout since ``since`` (a `time.monotonic`
    instant, when the first run, limited by `placed_run_limit`, began); None when that is
    under `MIN_RERUN_S` (and under ``seconds``: a run as long as its own limit is worth it)."""
    left = time_left(seconds, since)
    return left if left >= min(MIN_RERUN_S, seconds) else None


class ItemInvalid(Exception):
    """The item cannot be scored as given (status ``invalid``). ``code`` is stable."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class ItemError(Exception):
    """The infrastructure failed for this item (status ``error``, retryable)."""

    retryable = True

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class NotConfigured(ItemError):
    """The service is not set up for this item (no sandbox backend works here, no judge
    profile or reward model configured, an optional extra not installed): status
    ``error`` with code ``not_configured``, *not* retryable. The message names the
    setting or install step that fixes it."""

    retryable = False

    def __init__(self, message: str) -> None:
        super().__init__(NOT_CONFIGURED, message)


class ItemTimeout(Exception):
    """A deadline inside the verifier passed first (status ``timeout``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Params(BaseModel):
    """Base for every verifier's params model: unknown keys are rejected, not ignored, and
    floats must be finite (NaN or infinity in params is a client error). Frozen: one
    validated instance is shared by every item that sends the same params."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)


@dataclass
class Outcome:
    """What a per-item check produced: a reward in the verifier's documented range."""

    reward: float
    components: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Verifier(Protocol):
    """The batch-first verifier protocol (DESIGN.md section 2).

    The attributes are read-only: class attributes or instance attributes both satisfy it.
    """

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> int: ...

    @property
    def pool(self) -> Pool: ...

    @property
    def Params(self) -> type[BaseModel]: ...  # noqa: N802 - it is a model class

    @property
    def description(self) -> str: ...

    def score(self, items: Sequence[Item]) -> list[Result]:
        """Score ``items``; return exactly one result per item, in order. Never raises."""
        ...


@runtime_checkable
class AsyncVerifier(Verifier, Protocol):
    """A verifier that can also be awaited (judges: the time goes to waiting on HTTP).

    Executors with an event loop call ``ascore`` on it; ``score`` must still work for
    callers without one (it may run ``ascore`` on a private loop).
    """

    async def ascore(self, items: Sequence[Item]) -> list[Result]:
        """Like `Verifier.score`, awaited on the caller's event loop. Never raises."""
        ...


@runtime_checkable
class Closable(Protocol):
    """Optional: an async verifier holding per-loop resources (pooled connections).

    The gateway awaits ``aclose`` on its event loop when it shuts down, so what the
    verifier opened on that loop is closed there, not left to the garbage collector."""

    async def aclose(self) -> None: ...


@runtime_checkable
class Observable(Protocol):
    """Optional: a verifier with state worth reporting (loaded models, queues).

    ``health`` feeds ``/readyz`` (cheap, never loads anything; a ``problem`` key says
    what is wrong); ``saturated`` lets the gateway refuse new work with 429 instead of
    accepting items only to fail them.
    """

    def health(self) -> dict[str, Any]: ...

    def saturated(self) -> bool: ...


@runtime_checkable
class Configurable(Protocol):
    """Optional: a verifier that needs the operator's configuration (judge profiles,
    reward models). ``configuration_problem`` says why *no* item can be scored as the
    service is configured, naming the setting that fixes it, or None. Checked at start-up:
    it may read settings and files, never loads a model or calls an endpoint. A problem
    that spares some items (one of several models broken) belongs in ``health``."""

    def configuration_problem(self) -> str | None: ...


@runtime_checkable
class Measured(Protocol):
    """Optional: a verifier with Prometheus collectors of its own (judge token usage).
    The process that serves metrics registers them next to its own."""

    def collectors(self) -> list[Any]: ...


P = TypeVar("P", bound=BaseModel)


class ItemVerifier(ABC, Generic[P]):
    """Base for verifiers that score each item independently.

    Subclasses set the class attributes and implement `check`, which may raise
    `ItemInvalid`, `ItemError` or `ItemTimeout`. `score` validates params, times each
    item and converts exceptions into per-item results; an unexpected exception becomes
    status ``error`` with code ``verifier_failed`` (a bug is never a reward of 0).
    """

    name: ClassVar[str]
    version: ClassVar[int] = 1
    """Raised when a verdict an ``ok`` result carried would change (a hack closed); a
    ``timeout``/``invalid``/``error`` that becomes a score changes no ``ok`` verdict."""
    pool: ClassVar[Pool] = Pool.CPU
    Params: ClassVar[type[BaseModel]]
    description: ClassVar[str] = ""

    @property
    def ref(self) -> str:
        """``name@version``, as reported in each result's ``verifier`` field."""
        return f"{self.name}@{self.version}"

    @abstractmethod
    def check(self, item: Item, params: P) -> Outcome:
        """Score one item whose params are already validated."""

    def score(self, items: Sequence[Item]) -> list[Result]:
        return [self.score_one(item) for item in items]

    def score_one(self, item: Item) -> Result:
        """Score one item; never raises."""
        start = time.perf_counter()
        result = self._run(item)
        # One update of the model's dict instead of four validated setattrs: this runs
        # once per item on the hottest path of every cheap verifier.
        result.__dict__.update(
            id=item.id,
            metadata=item.metadata,
            verifier=self.ref,
            elapsed_ms=(time.perf_counter() - start) * 1000.0,
        )
        return result

    def _run(self, item: Item) -> Result:
        try:
            params = self.parse_params(item.params)
            outcome = self.check(item, params)
        except ItemInvalid as exc:
            return Result.failed(Status.INVALID, exc.code, exc.message)
        except ItemError as exc:
            return Result.failed(Status.ERROR, exc.code, exc.message, retryable=exc.retryable)
        except ItemTimeout as exc:
            return Result.failed(Status.TIMEOUT, "deadline", exc.message)
        except RecursionError:
            return Result.failed(Status.INVALID, "too_deep", "input nests too deeply to score")
        except Exception as exc:  # noqa: BLE001 - a verifier bug must not crash the batch
            return Result.failed(Status.ERROR, "verifier_failed", f"{type(exc).__name__}: {exc}")
        return Result(
            status=Status.OK,
            reward=outcome.reward,
            components=outcome.components,
            details=outcome.details,
        )

    def parse_params(self, raw: dict[str, Any]) -> P:
        """Validate ``raw`` with ``Params``; raise `ItemInvalid` naming the bad field.
        Valid params are kept by their JSON (a batch's items mostly share theirs): one
        frozen instance serves them all."""
        kept: ReferenceCache[P] | None = self.__dict__.get("_params_kept")
        if kept is None:
            kept = self.__dict__.setdefault("_params_kept", ReferenceCache(KEPT_PARAMS, 1024))
        return kept.get(raw, lambda: self._validated(raw))

    def _validated(self, raw: dict[str, Any]) -> P:
        try:
            return self.Params.model_validate(raw)  # type: ignore[return-value]
        except ValidationError as exc:
            raise ItemInvalid("invalid_params", describe_validation_error(exc, "params")) from None


KEPT_PARAMS = 256
"""Distinct params a verifier keeps validated (each under 1 KiB of JSON)."""


M = TypeVar("M", bound=BaseModel)


def object_reference(raw: object) -> object:
    """``raw``, or the object it is the JSON text of (datasets made for verl keep ground
    truth as a string). Only a string that decodes to a JSON object is replaced: for a
    verifier whose reference is an object, a string was never valid anyway."""
    if isinstance(raw, str) and raw.lstrip().startswith("{"):
        try:
            decoded = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return raw
        if isinstance(decoded, dict):
            return decoded
    return raw


def parse_reference(model: type[M], raw: object) -> M:
    """``raw`` (an item's reference, or its JSON text) as ``model``; `ItemInvalid` naming
    the bad field."""
    try:
        return model.model_validate(object_reference(raw))
    except ValidationError as exc:
        message = describe_validation_error(exc, "reference")
        raise ItemInvalid("invalid_reference", message) from None


def describe_validation_error(exc: ValidationError, prefix: str) -> str:
    """One line per problem, each naming the field, e.g. ``params.op: Input should be ...``."""
    lines = []
    for err in exc.errors(include_url=False):
        loc = ".".join(str(part) for part in (prefix, *err["loc"]))
        lines.append(f"{loc}: {err['msg']}")
    return "; ".join(lines)


def echo(result: Result, item: Item) -> Result:
    """Copy ``item``'s id and metadata onto ``result`` (results echo them) and return it."""
    result.id = item.id
    result.metadata = item.metadata
    return result
