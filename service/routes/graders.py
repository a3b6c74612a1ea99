"""OpenAI-style graders: ``POST /v1/graders/run`` and ``POST /v1/graders/validate``."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter

from service.adapters.graders import (
    GraderRequest,
    GraderRunRequest,
    GraderRunResponse,
    TemplateError,
    combine,
    error_flags,
    leaf_items,
)
from service.deps import CallerDep, DispatcherDep
from service.schemas import ErrorResponse

router = APIRouter(tags=["compatibility"])
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 413, 422, 429)
}


@router.post("/v1/graders/validate", response_model=GraderRequest, responses=_ERRORS)
async def validate(body: GraderRequest) -> GraderRequest:
    """The grader, normalised, if referee can run it; else 422 naming the field."""
    return body


@router.post("/v1/graders/run", response_model=GraderRunResponse, responses=_ERRORS)
async def run(
    body: GraderRunRequest, dispatcher: DispatcherDep, caller: CallerDep
) -> GraderRunResponse:
    """Run the grader on ``model_sample`` and ``item``; errors are flags, reward null."""
    start = time.perf_counter()
    grader = body.grader
    metadata: dict[str, Any] = {"name": grader.name, "type": grader.type}
    try:
        leaves = leaf_items(grader, body.model_sample, body.item)
    except TemplateError as exc:
        metadata |= {"errors": error_flags([], str(exc)), "execution_time": 0.0, "scores": {}}
        return GraderRunResponse(reward=None, sub_rewards={}, metadata=metadata)
    await caller.spend(len(leaves))
    results = await dispatcher.score([item for _, item in leaves], dispatcher.budget(None, None))
    by_key = {key: result for (key, _), result in zip(leaves, results, strict=True)}
    reward, subs = combine(grader, by_key)
    metadata |= {
        "errors": error_flags(results),
        "execution_time": time.perf_counter() - start,
        "scores": {key: r.reward for key, r in by_key.items()},
    }
    return GraderRunResponse(reward=reward, sub_rewards=subs, metadata=metadata)
