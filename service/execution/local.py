"""Score in this process, without a server: the embedded executor behind a plain call."""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Sequence

from referee.service.execution.dispatch import Dispatcher
from referee.service.execution.executor import EmbeddedExecutor
from referee.service.metrics import Metrics
from referee.service.settings import Settings
from referee.verifiers.builtin import default_registry
from referee.verifiers.types import Item, Result

UNGUARDED = (
    "LocalScorer was started again inside one of its own worker processes: they import "
    "your main module, so a script must keep the code that scores under "
    'if __name__ == "__main__":'
)


class UnguardedScript(RuntimeError):
    """A script created a `LocalScorer` at import time (see `UNGUARDED`)."""


class LocalScorer:
    """A context manager owning an event loop, the worker pools and a dispatcher.

    ``with LocalScorer() as scorer: scorer.score(items)`` gives the same results as
    ``POST /v1/score`` on an embedded server with the same settings.
    """

    def __init__(self, settings: Settings | None = None) -> None:
        if multiprocessing.parent_process() is not None:
            raise UnguardedScript(UNGUARDED)
        self.settings = settings or Settings()
        registry = default_registry(self.settings.engines)
        self._executor = EmbeddedExecutor(self.settings, registry)
        metrics = Metrics(self._executor.readiness)
        self._dispatcher = Dispatcher(self.settings, registry, self._executor, metrics)
        self._runner = asyncio.Runner()

    def __enter__(self) -> LocalScorer:
        self._runner.run(self._executor.start())
        return self

    def __exit__(self, *_: object) -> None:
        self._runner.run(self._executor.close())
        self._runner.close()

    def score(self, items: Sequence[Item], deadline_s: float | None = None) -> list[Result]:
        budget = self._dispatcher.budget(deadline_s, None)
        return self._runner.run(self._dispatcher.score(list(items), budget))
