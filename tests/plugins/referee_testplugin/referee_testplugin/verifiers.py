"""A well-behaved plugin verifier and a set of deliberately misbehaving ones.

- ``reverse``: reward 1 when the response is the reference reversed (proves plugins load).
- ``hang``: sleeps forever; ``spin``: burns CPU forever; ``crash``: kills its own process;
  ``raises``: raises from ``score``; ``short``: returns too few results; ``slow``: sleeps
  ``params.seconds`` then scores 1; ``hog``: allocates ``params.seconds`` GiB (the one
  float param doubles as size). They prove the executor contains every failure.
- ``budgeted``: begins a CPU budget of ``params.budget_s``, then burns ``params.spin_s`` of
  CPU and sleeps ``params.sleep_s``; with its budget spent it answers 0 at once. It
  proves the pool enforces budgets (`referee.verifiers.budget`) on CPU time.
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.verifiers import budget
from referee.verifiers.base import ItemVerifier, Outcome, Params
from referee.verifiers.types import Item, Pool, Result, Status


class ReverseVerifier(ItemVerifier[Params]):
    name = "reverse"
    Params = Params
    description = "Test plugin: response must equal the reference reversed."

    def check(self, item: Item, params: Params) -> Outcome:
        return Outcome(reward=float(item.response_text() == str(item.reference)[::-1]))


class SlowParams(Params):
    seconds: float = 0.0
    started: str = ""
    """A file ``slow`` creates when it starts, for a test to wait on."""


class _Misbehaving:
    version = 1
    pool = Pool.CPU
    Params: Any = SlowParams
    description = "Test plugin: misbehaves on purpose."

    def __init__(self, name: str) -> None:
        self.name = name

    def score(self, items: Sequence[Item]) -> list[Result]:
        if self.name == "hang":
            time.sleep(10_000)
        if self.name == "spin":
            while True:
                pass
        if self.name == "crash":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.name == "raises":
            raise RuntimeError("boom")
        if self.name == "short":
            return []
        if self.name == "hog":
            hoard = bytearray(int(float(items[0].params.get("seconds", 4.0)) * 2**30))
            return [Result(status=Status.OK, reward=float(len(hoard) > 0)) for _ in items]
        for item in items:
            if item.params.get("started"):
                Path(str(item.params["started"])).touch()
            time.sleep(float(item.params.get("seconds", 0.0)))
        return [Result(status=Status.OK, reward=1.0) for _ in items]


class BudgetParams(Params):
    budget_s: float = 1.0
    spin_s: float = 0.0
    sleep_s: float = 0.0


class BudgetedVerifier(ItemVerifier[BudgetParams]):
    name = "budgeted"
    Params = BudgetParams
    description = "Test plugin: spends CPU under a budget."

    def check(self, item: Item, params: BudgetParams) -> Outcome:
        details: dict[str, Any] = {"pid": os.getpid()}
        if not budget.begin(params.budget_s):
            return Outcome(reward=0.0, details={**details, "rule": budget.OVER_BUDGET})
        end = time.process_time() + params.spin_s
        while time.process_time() < end:
            pass
        time.sleep(params.sleep_s)
        return Outcome(reward=1.0, details=details)


class AsyncSleeper:
    """``asleep`` (pool io): awaits ``params.seconds`` per item, all items concurrently."""

    name = "asleep"
    version = 1
    pool = Pool.IO
    Params: Any = SlowParams
    description = "Test plugin: an async io-pool verifier."

    def score(self, items: Sequence[Item]) -> list[Result]:
        return asyncio.run(self.ascore(items))

    async def ascore(self, items: Sequence[Item]) -> list[Result]:
        async def one(item: Item) -> Result:
            await asyncio.sleep(float(item.params.get("seconds", 0.0)))
            return Result(status=Status.OK, reward=1.0)

        return list(await asyncio.gather(*(one(item) for item in items)))


OBSERVED: dict[str, Any] = {"saturated": False, "problem": None}
"""State of the ``observed`` verifier, set by tests in the gateway's own process."""


class ObservedVerifier:
    """``observed`` (pool io): reports health and saturation from `OBSERVED`."""

    name = "observed"
    version = 1
    pool = Pool.IO
    Params: Any = SlowParams
    description = "Test plugin: reports health and saturation."

    def score(self, items: Sequence[Item]) -> list[Result]:
        return [Result(status=Status.OK, reward=1.0) for _ in items]

    def health(self) -> dict[str, Any]:
        problem = OBSERVED["problem"]
        return {"problem": problem} if problem else {"fine": True}

    def saturated(self) -> bool:
        return bool(OBSERVED["saturated"])


class BatchSize:
    """``batchsize`` (pool cpu): a batch verifier that says how many items each call got
    (``details.batch``), in which process (``details.pid``), and how many objects that
    process froze out of the collector's sight (``details.frozen``)."""

    name = "batchsize"
    version = 1
    pool = Pool.CPU
    Params: Any = SlowParams
    description = "Test plugin: reports the size of the batch it was handed."

    def score(self, items: Sequence[Item]) -> list[Result]:
        details = {"batch": len(items), "pid": os.getpid(), "frozen": gc.get_freeze_count()}
        return [Result(status=Status.OK, reward=1.0, details=details) for _ in items]


def misbehaving_verifiers() -> list[Any]:
    names = ("hang", "spin", "crash", "raises", "short", "slow", "hog")
    return [
        *(_Misbehaving(n) for n in names),
        AsyncSleeper(),
        ObservedVerifier(),
        BatchSize(),
        BudgetedVerifier(),
    ]
