"""OpenAI-style graders: ``POST /v1/graders/run`` and ``POST /v1/graders/validate``, also
under the OpenAI SDK's paths (``/v1/fine_tuning/alpha/graders/...``)."""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter

from referee.service.adapters.graders import (
    Expansion,
    GraderRequest,
    GraderRunRequest,
    GraderRunResponse,
    GraderTooLarge,
    TemplateError,
    leaf_items,
    report,
    template_failure,
)
from referee.service.http.body import CappedRoute
from referee.service.http.deps import CallerDep, DispatcherDep, SettingsDep
from referee.service.http.errors import PayloadTooLarge
from referee.service.http.schemas import ErrorResponse

router = APIRouter(tags=["compatibility"], route_class=CappedRoute)
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 413, 422, 429)
}


@router.post("/v1/graders/validate", response_model=GraderRequest, responses=_ERRORS)
@router.post(
    "/v1/fine_tuning/alpha/graders/validate", response_model=GraderRequest, responses=_ERRORS
)
async def validate(body: GraderRequest) -> GraderRequest:
    """The grader, normalised, if referee can run it; else 422 naming the field."""
    return body


@router.post("/v1/graders/run", response_model=GraderRunResponse, responses=_ERRORS)
@router.post(
    "/v1/fine_tuning/alpha/graders/run", response_model=GraderRunResponse, responses=_ERRORS
)
async def run(
    body: GraderRunRequest, dispatcher: DispatcherDep, caller: CallerDep, settings: SettingsDep
) -> GraderRunResponse:
    """Run the grader on ``model_sample`` and ``item``; errors are flags, reward null."""
    start = time.perf_counter()
    # The whole request's rendered text is bounded like one item's fields, times its leaves.
    expansion = Expansion(settings.max_items_per_request, settings.max_field_chars * 4)
    try:
        leaves = leaf_items(body.grader, body.model_sample, body.item, expansion)
    except GraderTooLarge as exc:
        raise PayloadTooLarge(f"grader: {exc}") from None
    except TemplateError as exc:
        return template_failure(body.grader, str(exc))
    await caller.spend(len(leaves))
    budget = dispatcher.budget(None, None, caller.ticket)
    results = await dispatcher.score([item for _, item in leaves], budget)
    return report(body.grader, leaves, results, time.perf_counter() - start)
