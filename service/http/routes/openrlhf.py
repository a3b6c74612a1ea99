"""``POST /get_reward``: OpenRLHF's remote reward endpoint, its wire format exactly.

OpenRLHF needs a number for every sample. So a batch with an ``invalid`` sample is a
422 naming it, and one with an ``error`` or ``timeout`` is a 503 with ``Retry-After``
(OpenRLHF's client retries): a failure is never sent back as a reward of 0.
"""

from __future__ import annotations

from fastapi import APIRouter

from referee.service.adapters.openrlhf import RewardRequest, RewardResponse, failures, reward_body
from referee.service.http.body import ITEM_LIST, CappedRoute
from referee.service.http.deps import CallerDep, DispatcherDep, SettingsDep
from referee.service.http.errors import Unavailable, Unprocessable
from referee.service.http.schemas import ErrorResponse

router = APIRouter(tags=["compatibility"], route_class=CappedRoute)


@router.post(
    "/get_reward",
    response_model=RewardResponse,
    responses={code: {"model": ErrorResponse} for code in (401, 413, 422, 429, 503)},
    openapi_extra={ITEM_LIST: "query"},
)
async def get_reward(
    body: RewardRequest, dispatcher: DispatcherDep, settings: SettingsDep, caller: CallerDep
) -> RewardResponse:
    """Score OpenRLHF's batch with the mapping in ``REFEREE_OPENRLHF_MAPPING``."""
    try:
        items = body.items(settings.openrlhf_mapping)
    except ValueError as exc:
        raise Unprocessable(str(exc)) from None
    await caller.spend(len(items))
    results = await dispatcher.score(items, dispatcher.budget(None, None, caller.ticket))
    invalid, failed = failures(results)
    if invalid:
        first = results[invalid[0]]
        detail = first.error.message if first.error else "cannot be scored"
        raise Unprocessable(f"query[{invalid[0]}] ({len(invalid)} in all): {detail}")
    if failed:
        first = results[failed[0]]
        detail = first.error.message if first.error else first.status.value
        raise Unavailable(
            f"{len(failed)} samples failed to score (query[{failed[0]}]: {detail}); retry",
            headers={"Retry-After": "1"},
        )
    return reward_body(results)
