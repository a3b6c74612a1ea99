"""Verifiers that score an item with other verifiers: the nested spec and how to run it.

``composite`` and ``calibration`` both name sub-verifiers from the registry they were
registered in (`NestedScorer.bind_registry`) and score sub-items built from the parent
item in this process. How deep such verifiers may nest is capped (`MAX_NESTING`), tracked
in a context variable rather than in the wire format, so a client cannot see or forge it
and a composite that names itself cannot recurse forever.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from referee.verifiers.base import ItemError, ItemInvalid, ItemTimeout
from referee.verifiers.batch import score_with
from referee.verifiers.registry import Registry, UnknownVerifier
from referee.verifiers.types import VERIFIER_PATTERN, Item, Result, Status

MAX_NESTING = 4
"""Most levels of sub-verifiers below the top-level item (composites inside composites)."""

_depth: ContextVar[int] = ContextVar("referee_nesting_depth", default=0)


class SubVerifier(BaseModel):
    """One nested verifier: which one, its params, and optionally its own reference.

    When ``reference`` is absent the parent item's reference is used; an explicit
    ``null`` is passed on as null (absent and null differ, via ``model_fields_set``).
    """

    model_config = ConfigDict(extra="forbid")

    verifier: str = Field(pattern=VERIFIER_PATTERN, max_length=128)
    """Registry name, optionally pinned (``string``, ``math@1``)."""
    params: dict[str, Any] = Field(default_factory=dict)
    reference: Any = None

    def sub_item(self, parent: Item, response: str | None = None) -> Item:
        """The item this spec scores: the parent's prompt, response and group.

        ``response`` replaces the parent's response when given.
        """
        own = "reference" in self.model_fields_set
        return Item(
            verifier=self.verifier,
            prompt=parent.prompt,
            response=parent.response if response is None else response,
            reference=self.reference if own else parent.reference,
            params=self.params,
            group=parent.group,
        )


class NestedScorer:
    """Mixin for verifiers that run sub-verifiers from the registry they are bound to."""

    _registry: Registry | None = None

    def bind_registry(self, registry: Registry) -> None:
        """Resolve sub-verifiers from ``registry``; `Registry.register` calls this."""
        self._registry = registry

    def score_nested(self, spec: SubVerifier, item: Item, field: str) -> Result:
        """Score ``item`` (already built from ``spec``) with the verifier ``spec`` names.

        ``field`` is the params path of ``spec`` (``params.verifiers.a``), used in messages.
        Raises `ItemInvalid` for an unknown verifier or nesting past `MAX_NESTING`, and
        `ItemError` when this verifier was never bound to a registry. The returned result
        may have any status; the caller decides how it propagates.
        """
        if self._registry is None:
            raise ItemError("not_bound", f"{field}: no registry to resolve sub-verifiers from")
        depth = _depth.get()
        if depth >= MAX_NESTING:
            raise ItemInvalid(
                "too_deep", f"{field}: verifiers nest more than {MAX_NESTING} levels deep"
            )
        try:
            verifier = self._registry.get(spec.verifier)
        except UnknownVerifier as exc:
            raise ItemInvalid("unknown_verifier", f"{field}.verifier: {exc}") from None
        token = _depth.set(depth + 1)
        try:
            return score_with(verifier, [item])[0]
        finally:
            _depth.reset(token)


FAILURE_PRECEDENCE = (Status.INVALID, Status.ERROR, Status.TIMEOUT)
"""Which non-ok sub-status wins when several fail: ``invalid`` first (retrying cannot
help), then ``error`` (retrying may), then ``timeout``."""


def reward_of(result: Result, field: str) -> float:
    """The reward of an ``ok`` sub-result; otherwise raise what its status means.

    ``invalid``, ``error`` and ``timeout`` become `ItemInvalid` (keeping the sub-result's
    code), `ItemError` and `ItemTimeout`, with a message naming ``field`` and the
    sub-verifier, so a failure is never mistaken for a reward of 0. An ``ok`` result
    without a finite reward is a broken verifier: `ItemError`.
    """
    if result.status == Status.OK:
        if result.reward is None or not math.isfinite(result.reward):
            raise ItemError(
                "verifier_failed", f"{field}: {result.verifier} returned ok without a reward"
            )
        return result.reward
    code, message = (result.error.code, result.error.message) if result.error else ("", "")
    text = f"{field}: {result.verifier} said {result.status.value}: {message}"
    if result.status == Status.INVALID:
        raise ItemInvalid(code or "invalid", text)
    if result.status == Status.ERROR:
        raise ItemError(code or "error", text)
    raise ItemTimeout(text)
