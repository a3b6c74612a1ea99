"""``POST /v1/logprobs``: per-token statistics of continuations under a local LM."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from referee.service.http.body import ITEM_LIST, CappedRoute
from referee.service.http.deps import CallerDep, DispatcherDep, SettingsDep
from referee.service.http.errors import PayloadTooLarge
from referee.service.http.logprob_schemas import (
    LogprobsRequest,
    LogprobsResponse,
    encode_logprob_result,
)
from referee.service.http.responses import JSONBytes
from referee.service.http.schemas import ErrorResponse

router = APIRouter(tags=["logprobs"], route_class=CappedRoute)

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (400, 401, 413, 422, 429)
}


@router.post(
    "/v1/logprobs",
    response_model=LogprobsResponse,
    responses=_ERRORS,
    openapi_extra={ITEM_LIST: "items"},
)
async def logprobs(
    request: LogprobsRequest, dispatcher: DispatcherDep, settings: SettingsDep, caller: CallerDep
) -> JSONBytes:
    """Per continuation token: log-probability, entropy, optionally the top-k
    alternatives and the log-ratio against ``compare_model``; per item sums and means.
    Same limits, statuses and errors as ``/v1/score`` (the items are ``logprobs``
    verifier items)."""
    if len(request.items) > settings.max_items_per_request:
        raise PayloadTooLarge(
            f"items: {len(request.items)} items exceeds the limit of "
            f"{settings.max_items_per_request} per request"
        )
    await caller.spend(len(request.items))
    budget = dispatcher.budget(request.deadline_s, None, caller.ticket)
    results = await dispatcher.score(request.to_items(), budget)
    compact = request.format == "compact"
    return JSONBytes({"results": [encode_logprob_result(r, compact) for r in results],
                      "model": request.model})  # fmt: skip
