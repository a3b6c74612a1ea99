"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from referee.service.execution.dispatch import Dispatcher
from referee.service.http.deps import DispatcherDep, MetricsDep
from referee.service.http.responses import JSONBytes
from referee.service.http.schemas import Health, Readiness
from referee.verifiers.base import Observable

router = APIRouter(tags=["health"])
metrics_router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """The process is up and serving HTTP."""
    return Health(status="ok")


@router.get("/readyz", response_model=Readiness, responses={503: {"model": Readiness}})
async def readyz(dispatcher: DispatcherDep, request: Request) -> JSONBytes:
    """Ready when the executor can take work; 503 with the reasons otherwise. Public for
    orchestrators' probes; with API keys set, only an authenticated caller sees the pools,
    verifiers and problems behind the answer."""
    executor = dispatcher.executor
    await executor.refresh()
    pools = executor.readiness()
    problems = pool_problems(pools)
    problems += [f"plugin {n}: {e}" for n, e in dispatcher.registry.load_errors.items()]
    verifiers = verifier_health(dispatcher)
    problems += [
        f"verifier {ref}: {h['problem']}" for ref, h in verifiers.items() if "problem" in h
    ]
    # Only the executor decides readiness: a failed reward model or plugin degrades its
    # own verifier (its items say why) but must not take every other verifier offline.
    ready = not any(p.startswith(("pool", "broker")) for p in problems)
    body = Readiness(
        ready=ready, executor=executor.name, pools=pools, verifiers=verifiers, problems=problems
    )
    if not getattr(request.state, "authenticated", True):
        body = Readiness(ready=ready, executor=executor.name, pools={})
    return JSONBytes(body.model_dump(), status_code=200 if ready else 503)


def verifier_health(dispatcher: Dispatcher) -> dict[str, dict[str, Any]]:
    """``health()`` of every verifier that reports one; a report that fails is a problem."""
    report: dict[str, dict[str, Any]] = {}
    for verifier in dispatcher.registry.all():
        if isinstance(verifier, Observable):
            ref = f"{verifier.name}@{verifier.version}"
            try:
                report[ref] = verifier.health()
            except Exception as exc:  # noqa: BLE001 - a health probe must not break /readyz
                report[ref] = {"problem": f"health check failed: {type(exc).__name__}: {exc}"}
    return report


def pool_problems(pools: dict[str, dict[str, Any]]) -> list[str]:
    """What keeps the pools from taking work: dead local workers, an unreachable broker,
    or (distributed) no worker at all consuming the cpu queue."""
    problems = []
    for name, info in pools.items():
        if info.get("started") and info.get("alive") == 0:
            problems.append(f"pool {name}: 0 of {info['workers']} workers alive")
        if info.get("reachable") is False:
            problems.append(f"broker unreachable: {info.get('error')}")
    cpu = pools.get("cpu", {})
    if "consumers" in cpu and cpu["consumers"] == 0:
        problems.append("pool cpu: no worker consumes the cpu queue")
    return problems


@metrics_router.get("/metrics", response_class=Response)
async def metrics(metrics: MetricsDep, dispatcher: DispatcherDep) -> Response:
    """Prometheus text format."""
    await dispatcher.executor.refresh()
    return Response(metrics.render(), media_type="text/plain; version=0.0.4")
