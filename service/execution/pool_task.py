"""A chunk of one request's items on its way through a `ProcessPool`: its results as
they come, its future, and how it ends when time or the pool runs out."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field

from referee.verifiers.base import echo
from referee.verifiers.types import Item, Result, Status


class WorkerStartError(RuntimeError):
    """A worker process did not come up; its items fail as ``error``, never a respawn loop."""


@dataclass
class PoolTask:
    items: list[Item]
    item_timeout: float
    deadline: float
    future: Future[list[Result]] = field(default_factory=Future)
    results: list[Result | None] = field(init=False)
    cancelled: bool = False
    spent: set[int] = field(default_factory=set)
    """Indices of items whose CPU budget ran out: their next attempt is told so."""

    def __post_init__(self) -> None:
        self.results = [None] * len(self.items)

    def pending(self) -> list[int]:
        return [i for i, r in enumerate(self.results) if r is None]

    def fail(self, index: int, status: Status, code: str, message: str) -> None:
        if self.results[index] is None:
            failed = Result.failed(status, code, message)  # type: ignore[arg-type]
            self.results[index] = echo(failed, self.items[index])


def expired(task: PoolTask) -> list[Result]:
    """A chunk's results at the deadline: what finished, ``timeout`` for the rest."""
    message = "the request deadline passed before a worker was free"
    return [
        result
        if result is not None
        else echo(Result.failed(Status.TIMEOUT, "deadline", message), task.items[index])
        for index, result in enumerate(list(task.results))
    ]


def finish(task: PoolTask, status: Status, code: str, message: str) -> None:
    for index in task.pending():
        task.fail(index, status, code, message)
    if not task.future.done():
        task.future.set_result([r for r in task.results if r is not None])
