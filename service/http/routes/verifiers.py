"""``GET /v1/verifiers``: what can score, where it runs and what params it takes."""

from __future__ import annotations

from fastapi import APIRouter

from referee.service.http.deps import DispatcherDep
from referee.service.http.schemas import VerifierInfo, VerifierList
from referee.verifiers.registry import ref_of

router = APIRouter(tags=["verifiers"])


@router.get("/v1/verifiers", response_model=VerifierList)
async def list_verifiers(dispatcher: DispatcherDep) -> VerifierList:
    registry = dispatcher.registry
    return VerifierList(
        verifiers=[
            VerifierInfo(
                name=v.name,
                version=v.version,
                ref=ref_of(v),
                pool=v.pool.value,
                description=v.description,
                params_schema=v.Params.model_json_schema(),
            )
            for v in registry.all()
        ],
        load_errors=registry.load_errors,
    )
