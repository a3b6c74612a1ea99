"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from service.deps import DispatcherDep, MetricsDep, require_api_key
from service.responses import JSONBytes
from service.schemas import Health, Readiness

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """The process is up and serving HTTP."""
    return Health(status="ok")


@router.get("/readyz", response_model=Readiness, responses={503: {"model": Readiness}})
async def readyz(dispatcher: DispatcherDep) -> JSONBytes:
    """Ready when the executor's pools can take work; 503 with the reasons otherwise."""
    pools = dispatcher.executor.readiness()
    problems = [
        f"pool {name}: {info.get('alive', 0)} of {info['workers']} workers alive"
        for name, info in pools.items()
        if info.get("started") and "alive" in info and info["alive"] == 0
    ]
    problems += [f"plugin {n}: {e}" for n, e in dispatcher.registry.load_errors.items()]
    ready = not any(p.startswith("pool") for p in problems)
    body = Readiness(ready=ready, executor=dispatcher.executor.name, pools=pools, problems=problems)
    return JSONBytes(body.model_dump(), status_code=200 if ready else 503)


@router.get("/metrics", dependencies=[Depends(require_api_key)], response_class=Response)
async def metrics(metrics: MetricsDep) -> Response:
    """Prometheus text format."""
    return Response(metrics.render(), media_type="text/plain; version=0.0.4")
