"""CPU budgets for the part of scoring that a response can make arbitrarily costly.

Some verifiers run a general engine on what the policy wrote: sympy on an answer such as
``\\int_0^1 \\sum_{k=1}^{n} n^2 dx``, which can keep it busy for minutes. A deadline
alone would answer ``timeout`` (reward null): a trainer masks or retries such an item, so
a policy that finds these answers escapes its wrong answers. A budget makes the cost the
response's problem instead: an answer that cannot be checked within its budget earns what
a wrong answer earns, flagged, like Math-Verify's timeout that returns False.

The contract, between a verifier and the process pool that runs it (no signals, no
threads: the pool owns the worker process and can stop it):

- The verifier calls `begin` with a number of CPU seconds right before the costly work
  for one item (after the reference is parsed: a costly reference is the client's data
  and stays under the pool's item timeout).
- If that work goes past the budget, the pool stops the worker and scores the item again
  in a fresh one, with the budget marked spent. `begin` then returns False and the
  verifier answers its over-budget verdict without doing the work.
- Called outside a pool (a verifier used as a library), `begin` returns True and nothing
  is budgeted.

An item has one budget: the largest any of its `begin` calls asked for, counted from the
first (a `composite` with two math parts, or math with several references, gets one
budget for all of them, never the sum).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

DEFAULT_BUDGET_S = 3.0
"""CPU seconds a budgeted verifier gives one item unless configured otherwise."""
OVER_BUDGET = "over_budget"
"""The flag and rule a verifier reports for an item whose budget ran out."""


def exceeded(seconds: float) -> str:
    """What an over-budget verdict says in ``details.reason``."""
    return f"checking this response took more than {seconds:g} s of CPU (the budget)"


def over_budget(seconds: float, details: dict[str, Any]) -> dict[str, Any]:
    """The ``details`` of every over-budget verdict: ``details`` with the `exceeded`
    reason and the `OVER_BUDGET` flag among its flags."""
    flags = sorted({*details.get("flags", ()), OVER_BUDGET})
    return {**details, "reason": exceeded(seconds), "flags": flags}


@dataclass(frozen=True)
class Meter:
    """What a pool worker installs around one item: ``start(seconds)`` raises the item's
    budget to ``seconds`` (the first call also marks the CPU time it counts from);
    ``spent`` says this is the rerun of an item whose budget already ran out."""

    start: Callable[[float], None]
    spent: bool


_meter: ContextVar[Meter | None] = ContextVar("referee_budget_meter", default=None)


def begin(seconds: float) -> bool:
    """Announce up to ``seconds`` of CPU for the costly work that follows. False: the budget
    of this item ran out in an earlier attempt; answer without doing the work."""
    meter = _meter.get()
    if meter is None:
        return True
    if meter.spent:
        return False
    meter.start(seconds)
    return True


@contextmanager
def metered(meter: Meter) -> Iterator[None]:
    """Score one item under ``meter`` (used by the process pool's workers)."""
    token = _meter.set(meter)
    try:
        yield
    finally:
        _meter.reset(token)
