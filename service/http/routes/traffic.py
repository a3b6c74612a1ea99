"""``GET /v1/traffic``: the last minutes of ``/v1/score`` traffic on this gateway."""

from __future__ import annotations

from fastapi import APIRouter

from referee.service.http.deps import MetricsDep
from referee.service.http.schemas import ErrorResponse, TrafficView

router = APIRouter(tags=["health"])


@router.get("/v1/traffic", response_model=TrafficView, responses={401: {"model": ErrorResponse}})
async def traffic(metrics: MetricsDep) -> TrafficView:
    """Items per second, statuses and latency percentiles (p50, p90, p99) by verifier over
    the last five minutes, and items per five-second step: from the same results the
    Prometheus metrics count, on this gateway (replicas each keep their own)."""
    return TrafficView.model_validate(metrics.traffic.view())
