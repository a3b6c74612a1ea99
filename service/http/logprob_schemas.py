"""Wire models of ``POST /v1/logprobs`` and their translation to ``logprobs`` items.

A request lists continuations to read (text, or token ids) under one model; each comes
back with a status as on ``/v1/score`` and, when ``ok``, its per-token statistics: as
JSON lists, or (``format: compact``) as base64 little-endian float32 / int32 arrays,
about a fifth the size of the lists for long responses.
"""

from __future__ import annotations

import base64
from array import array
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from referee.gpu_rm.settings import MAX_TOP_K
from referee.verifiers.logprobs import MAX_IDS
from referee.verifiers.types import Conversation, ErrorInfo, Item, Result, Status


class LogprobItem(BaseModel):
    """One reading: ``prompt`` + ``continuation`` as text (a chat prompt goes through the
    model's chat template), or ``prompt_ids`` + ``continuation_ids``."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, max_length=512)
    prompt: str | Conversation | None = None
    continuation: str | None = None
    prompt_ids: list[int] | None = Field(default=None, max_length=MAX_IDS)
    continuation_ids: list[int] | None = Field(default=None, max_length=MAX_IDS)
    group: str | None = Field(default=None, max_length=512)


class LogprobsRequest(BaseModel):
    """``POST /v1/logprobs``."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    items: list[LogprobItem] = Field(min_length=1)
    model: str | None = Field(default=None, max_length=128)
    """A ``head: lm`` model of the catalog; may be omitted when only one is configured."""
    compare_model: str | None = Field(default=None, max_length=128)
    """A second model (same vocabulary): each token's log-ratio model / compare_model."""
    top_k: int = Field(default=0, ge=0, le=MAX_TOP_K)
    truncation: Literal["keep_end", "keep_start", "reject"] = "keep_end"
    format: Literal["lists", "compact"] = "lists"
    deadline_s: float | None = Field(default=None, gt=0)

    def to_items(self) -> list[Item]:
        """The ``logprobs`` verifier's items, in order."""
        params: dict[str, Any] = {"top_k": self.top_k, "truncation": self.truncation}
        for name in ("model", "compare_model"):
            if getattr(self, name) is not None:
                params[name] = getattr(self, name)
        items = []
        for entry in self.items:
            own = dict(params)
            if entry.continuation_ids is not None or entry.prompt_ids is not None:
                own.update(prompt_ids=entry.prompt_ids, continuation_ids=entry.continuation_ids)
            items.append(Item(id=entry.id, verifier="logprobs", prompt=entry.prompt,
                              response=entry.continuation or "", params=own,
                              group=entry.group))  # fmt: skip
        return items


class LogprobResult(BaseModel):
    """One reading's statistics (``ok``), or why there are none."""

    id: str | None = None
    status: Status
    error: ErrorInfo | None = None
    tokens: list[int] | str | None = None
    logprobs: list[float] | str | None = None
    entropies: list[float] | str | None = None
    top_k: list[list[list[float]]] | None = None
    log_ratio: list[float] | str | None = None
    sum_logprob: float | None = None
    mean_logprob: float | None = None
    mean_entropy: float | None = None
    sum_log_ratio: float | None = None


class LogprobsResponse(BaseModel):
    results: list[LogprobResult]
    model: str | None = None


_FLOATS = ("logprobs", "entropies", "log_ratio")
_SUMS = ("sum_logprob", "mean_logprob", "mean_entropy", "sum_log_ratio")


def encode_logprob_result(result: Result, compact: bool) -> dict[str, Any]:
    """A ``logprobs`` result in the route's shape (JSON-ready)."""
    error = result.error
    out: dict[str, Any] = {
        "id": result.id,
        "status": result.status.value,
        "error": None if error is None else error.model_dump(),
    }
    if result.status is not Status.OK:
        return out
    details = result.details
    out["tokens"] = _pack("i", details["tokens"]) if compact else details["tokens"]
    for name in _FLOATS:
        if name in details:
            out[name] = _pack("f", details[name]) if compact else details[name]
    for name in _SUMS:
        out[name] = details.get(name)
    if "top_k" in details:
        out["top_k"] = details["top_k"]
    return out


def _pack(kind: str, values: list[Any]) -> str:
    """base64 of little-endian 32-bit values (``f`` float32, ``i`` int32)."""
    packed = array(kind, values)
    if packed.itemsize != 4:
        raise ValueError(f"array type {kind!r} is not 32-bit here")
    if array("i", [1]).tobytes()[0] != 1:  # big-endian host: the wire is little-endian
        packed.byteswap()
    return base64.b64encode(packed.tobytes()).decode("ascii")
