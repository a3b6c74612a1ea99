"""Request and response bodies of the HTTP API (the wire types beyond Item and Result)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from referee.service.jobs.status import JobState
from referee.service.preflight import Problem
from referee.verifiers.types import GroupStats, Item, Result


class ScoreRequest(BaseModel):
    """``POST /v1/score``: one item or thousands; results come back in input order."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    items: list[Item] = Field(min_length=1)
    deadline_s: float | None = Field(default=None, gt=0)
    """Budget for the whole request, in seconds; unfinished items come back ``timeout``.
    Defaults to the server's ``default_deadline_s`` and is capped at ``max_deadline_s``."""
    item_timeout_s: float | None = Field(default=None, gt=0)
    """Hard limit per item; capped at the server's ``item_timeout_s``."""
    details: bool = True
    """Set false to drop each result's ``details`` (smaller responses for trainers)."""
    pass_threshold: float = 1.0
    """A reward at or above this counts as a pass in the group statistics."""


class ScoreResponse(BaseModel):
    results: list[Result]
    groups: dict[str, GroupStats] = Field(default_factory=dict)


class VerifierInfo(BaseModel):
    name: str
    version: int
    ref: str
    pool: str
    description: str
    params_schema: dict[str, Any]


class VerifierList(BaseModel):
    verifiers: list[VerifierInfo]
    load_errors: dict[str, str] = Field(default_factory=dict)
    """Plugins that failed to load, by entry-point name."""


class ErrorBody(BaseModel):
    code: str
    message: str


class ErrorResponse(BaseModel):
    """The one error shape of every route."""

    error: ErrorBody


class Health(BaseModel):
    status: str


class Readiness(BaseModel):
    ready: bool
    executor: str
    pools: dict[str, dict[str, Any]]
    verifiers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Verifiers that report state (e.g. ``rm@1``: each model loaded, failed or not yet)."""
    problems: list[Problem] = Field(default_factory=list)
    """Structured findings (`service.preflight.Problem`): ``blocking`` ones make
    ``ready`` false; the others disable one pool or verifier, or warn."""


class JobAccepted(BaseModel):
    id: str
    total: int
    """Lines received (blank lines are skipped)."""


class JobInfo(BaseModel):
    id: str
    state: JobState
    """``uploading``, ``running``, ``done``, ``cancelled`` or ``failed`` (``reason``)."""
    total: int
    done: int
    progress: float
    counts: dict[str, int]
    """Scored items by status."""
    created: float
    finished: float | None
    reason: str | None = None
    """Why a job is ``failed``."""


class RewardStats(BaseModel):
    count: int
    mean: float | None
    min: float | None
    max: float | None
    histogram: list[int]
    """Twenty bins over [0, 1]."""
    below_0: int
    above_1: int


class GroupSummary(BaseModel):
    count: int
    zero_variance: int
    """Groups whose ``ok`` rewards are all equal (one ``ok`` item included), as the
    ``groups`` of ``/v1/score`` define ``zero_variance``."""
    pass_rate_histogram: list[int]
    """Groups by pass rate (reward >= 1), in 21 bins: 0, 0.05, ..., 1."""


class SlowItem(BaseModel):
    index: int
    elapsed_ms: float
    verifier: str


class FlaggedItem(BaseModel):
    index: int
    verifier: str
    flags: list[str]


class JobSummaryResponse(BaseModel):
    """``GET /v1/jobs/{id}/summary``: the job's results so far, summarised."""

    job: JobInfo
    items: int
    """Results summarised (in input order; all of them once the job has ended)."""
    items_per_s: float | None
    eta_s: float | None
    by_status: dict[str, int]
    by_error: dict[str, int]
    rewards: dict[str, RewardStats]
    """``ok`` rewards by verifier."""
    groups: GroupSummary
    slowest: list[SlowItem]
    flags: dict[str, int]
    """Items by ``details.flags`` entry."""
    flagged: list[FlaggedItem]
    """The first 50 flagged items."""


class VerifierTraffic(BaseModel):
    items: int
    items_per_s: float
    by_status: dict[str, int]
    p50_ms: float
    p90_ms: float
    p99_ms: float


class TrafficView(BaseModel):
    """``GET /v1/traffic``."""

    window_s: float
    step_s: float
    items: int
    items_per_s: float
    by_status: dict[str, int]
    verifiers: dict[str, VerifierTraffic]
    series: list[int]
    """Items scored per step, oldest first (the last entry is the current step)."""


class JobLine(BaseModel):
    """``GET /v1/jobs/{id}/items/{index}``: one uploaded line and its result."""

    index: int
    item: Any
    """The line as uploaded: its JSON, or its text when it is not JSON."""
    result: Any
    """Its result, or null while it is not scored."""


class JobList(BaseModel):
    jobs: list[JobInfo]
    """The caller's unexpired jobs, newest first."""
