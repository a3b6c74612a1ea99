"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from referee.service.execution.dispatch import Dispatcher
from referee.service.http.deps import DispatcherDep, MetricsDep
from referee.service.http.responses import JSONBytes
from referee.service.http.schemas import Health, Readiness
from referee.service.preflight import Problem
from referee.verifiers.base import Observable

router = APIRouter(tags=["health"])
metrics_router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=Health)
async def healthz() -> Health:
    """The process is up and serving HTTP."""
    return Health(status="ok")


@router.get("/readyz", response_model=Readiness, responses={503: {"model": Readiness}})
async def readyz(dispatcher: DispatcherDep, request: Request) -> JSONBytes:
    """Ready when the executor can take work; 503 otherwise. ``problems`` are structured
    (`Problem`): a ``blocking`` one (dead workers, an unreachable broker) makes the service
    not ready; the others disable a pool or verifier (its items are answered
    ``not_configured``) or only warn, and each pool says whether it is ``ready``. Public
    for orchestrators' probes; with API keys set, only an authenticated caller sees the
    pools, verifiers and problems behind the answer."""
    executor = dispatcher.executor
    await executor.refresh()
    pools = {name: dict(info) for name, info in executor.readiness().items()}  # ours to annotate
    verifiers = verifier_health(dispatcher)
    problems = [
        *pool_problems(pools),
        *dispatcher.problems,
        *plugin_problems(dispatcher),
        *(
            Problem(component=f"verifier:{ref}", message=health["problem"])
            for ref, health in verifiers.items()
            if "problem" in health
        ),
    ]
    for name, info in pools.items():
        info["ready"] = not any(p.pool == name or p.component == f"pool:{name}" for p in problems)
    # Only the executor decides readiness: a failed reward model or plugin degrades its
    # own verifier (its items say why) but must not take every other verifier offline.
    ready = not any(p.blocking for p in problems)
    body = Readiness(
        ready=ready, executor=executor.name, pools=pools, verifiers=verifiers, problems=problems
    )
    if not getattr(request.state, "authenticated", True):
        body = Readiness(ready=ready, executor=executor.name, pools={})
    return JSONBytes(body.model_dump(mode="json"), status_code=200 if ready else 503)


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


def plugin_problems(dispatcher: Dispatcher) -> list[Problem]:
    """Plugins that failed to load: their verifiers do not exist (items are ``invalid``)."""
    return [
        Problem(component=f"plugin:{name}", message=error)
        for name, error in dispatcher.registry.load_errors.items()
    ]


def pool_problems(pools: dict[str, dict[str, Any]]) -> list[Problem]:
    """What keeps the pools from taking work, all blocking: dead local workers, an
    unreachable broker, or (distributed) no worker at all consuming the cpu queue."""
    problems = []
    for name, info in pools.items():
        if info.get("started") and info.get("alive") == 0:
            message = f"0 of {info['workers']} workers alive"
            problems.append(Problem(component=f"pool:{name}", message=message, blocking=True))
        if info.get("reachable") is False:
            message = f"unreachable: {info.get('error')}"
            problems.append(Problem(component="broker", message=message, blocking=True))
    cpu = pools.get("cpu", {})
    if "consumers" in cpu and cpu["consumers"] == 0:
        message = "no worker consumes the cpu queue"
        problems.append(Problem(component="pool:cpu", message=message, blocking=True))
    return problems


@metrics_router.get("/metrics", response_class=Response)
async def metrics(metrics: MetricsDep, dispatcher: DispatcherDep) -> Response:
    """Prometheus text format."""
    await dispatcher.executor.refresh()
    return Response(metrics.render(), media_type="text/plain; version=0.0.4")
