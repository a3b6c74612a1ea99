"""Batch jobs: ``POST /v1/jobs`` (JSONL upload), status, ordered results, cancel."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import StreamingResponse

from referee.service.execution.fair_queue import Priority, Ticket
from referee.service.http.deps import CallerDep
from referee.service.http.errors import Conflict, NotFound, UnsupportedMediaType
from referee.service.http.schemas import (
    ErrorResponse,
    JobAccepted,
    JobInfo,
    JobLine,
    JobList,
    JobSummaryResponse,
)
from referee.service.jobs.backend import JobBackend
from referee.service.jobs.status import JobState, JobStatus

router = APIRouter(tags=["jobs"])

JobId = Annotated[str, Path(pattern=r"^[0-9a-f]{32}$", description="The id POST /v1/jobs gave")]
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 404, 409, 413, 415, 429, 503, 507)
}


async def get_jobs(request: Request) -> JobBackend:
    jobs: JobBackend = request.app.state.jobs
    return jobs


JobsDep = Annotated[JobBackend, Depends(get_jobs)]


@router.post(
    "/v1/jobs",
    response_model=JobAccepted,
    status_code=202,
    responses=_ERRORS,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/x-ndjson": {"schema": {"type": "string", "format": "binary"}}},
        }
    },
)
async def submit(request: Request, jobs: JobsDep, caller: CallerDep) -> JobAccepted:
    """Upload items as JSONL (one item per line); they are scored in the background, after
    interactive requests (batch priority). The body is the file as it is: a form or
    multipart upload is refused (415), since either would reach us with its lines changed
    (``curl -d`` drops newlines; use ``--data-binary @items.jsonl``)."""
    require_jsonl(request.headers.get("content-type"))
    ticket = Ticket(tenant=caller.ticket.tenant, priority=Priority.BATCH)
    job_id, total = await jobs.submit(request.stream(), ticket)
    return JobAccepted(id=job_id, total=total)


@router.get("/v1/jobs", response_model=JobList, responses=_ERRORS)
async def listing(jobs: JobsDep, caller: CallerDep) -> JobList:
    """The caller's unexpired jobs (running, finished, cancelled or failed), newest first."""
    return JobList(jobs=[describe(job) for job in await jobs.of_tenant(caller.ticket.tenant)])


@router.get("/v1/jobs/{job_id}", response_model=JobInfo, responses=_ERRORS)
async def status(job_id: JobId, jobs: JobsDep, caller: CallerDep) -> JobInfo:
    return describe(await found(jobs, job_id, caller))


@router.get("/v1/jobs/{job_id}/summary", response_model=JobSummaryResponse, responses=_ERRORS)
async def summary(job_id: JobId, jobs: JobsDep, caller: CallerDep) -> JobSummaryResponse:
    """Counts by status and error code, reward histograms by verifier, group pass rates
    and the share of zero-variance groups, the slowest and the flagged items: over the
    results so far while the job runs, all of them once it ends. Stored with the job."""
    job = await found(jobs, job_id, caller)
    folded = await jobs.summary(job_id)
    if folded is None:
        raise NotFound(f"no job {job_id} (never created, or expired)")
    rate, eta = pace(job)
    return JobSummaryResponse(job=describe(job), items_per_s=rate, eta_s=eta, **folded.view())


@router.get("/v1/jobs/{job_id}/items/{index}", response_model=JobLine, responses=_ERRORS)
async def line(
    job_id: JobId,
    index: Annotated[int, Path(ge=0, description="0-based line of the upload")],
    jobs: JobsDep,
    caller: CallerDep,
) -> JobLine:
    """One line of the job: the item as uploaded and its result (null until scored)."""
    job = await found(jobs, job_id, caller)
    if index >= job.total:
        raise NotFound(f"job {job_id} has {job.total} lines (index: {index} is past them)")
    item, result = await jobs.line(job_id, index)
    return JobLine(index=index, item=_parsed(item), result=_parsed(result))


def _parsed(line: bytes | None) -> Any:
    """A stored line as JSON, or as text when it is not JSON (a malformed upload line)."""
    if line is None:
        return None
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return line.decode(errors="replace")


def pace(job: JobStatus) -> tuple[float | None, float | None]:
    """Items per second since the job was created, and the seconds left at that pace."""
    elapsed = (job.finished or time.time()) - job.created
    if job.done == 0 or elapsed <= 0:
        return None, None
    rate = job.done / elapsed
    return rate, (job.total - job.done) / rate if not job.state.finished else 0.0


@router.get(
    "/v1/jobs/{job_id}/results",
    responses={**_ERRORS, 200: {"content": {"application/x-ndjson": {}}}},
)
async def results(job_id: JobId, jobs: JobsDep, caller: CallerDep) -> StreamingResponse:
    """One result per input line, in input order, as JSONL. 409 until the job ends."""
    job = await found(jobs, job_id, caller)
    if job.state not in (JobState.DONE, JobState.CANCELLED):
        raise Conflict(f"job {job_id} is {job.state} ({job.done}/{job.total} items scored)")
    stream: AsyncIterator[bytes] = jobs.results(job_id, job.total)
    return StreamingResponse(stream, media_type="application/x-ndjson")


@router.delete("/v1/jobs/{job_id}", response_model=JobInfo, responses=_ERRORS)
async def cancel(job_id: JobId, jobs: JobsDep, caller: CallerDep) -> JobInfo:
    """A running job: stop scoring its remaining items (results so far are kept). A
    finished or cancelled job: delete its items and results now, rather than at expiry
    (it no longer counts against the key's job quota; later reads are 404)."""
    job = await found(jobs, job_id, caller)
    if job.state.finished:
        await jobs.delete(job_id)
        return describe(job)
    await jobs.cancel(job_id)
    return describe(await found(jobs, job_id, caller))


async def found(jobs: JobBackend, job_id: str, caller: CallerDep) -> JobStatus:
    """The job, if it exists and ``caller``'s key owns it (another key's job is as
    unknown as one that never existed)."""
    job = await jobs.status(job_id)
    if job is None or job.tenant != caller.ticket.tenant:
        raise NotFound(f"no job {job_id} (never created, or expired)")
    return job


def describe(job: JobStatus) -> JobInfo:
    progress = job.done / job.total if job.total else 1.0
    return JobInfo(
        id=job.id,
        state=job.state,
        total=job.total,
        done=job.done,
        progress=progress,
        counts=job.counts,
        created=job.created,
        finished=job.finished,
        reason=job.reason,
    )


JSONL_TYPES = frozenset(
    {
        "application/x-ndjson",
        "application/jsonl",
        "application/x-jsonlines",
        "application/json-lines",
        "application/octet-stream",
        "text/plain",
    }
)


def require_jsonl(content_type: str | None) -> None:
    """415 for a body that is not a JSONL file as it is (no Content-Type is accepted)."""
    if content_type is None:
        return
    media = content_type.split(";", 1)[0].strip().lower()
    if media not in JSONL_TYPES:
        raise UnsupportedMediaType(
            f"Content-Type {media}: POST /v1/jobs takes the JSONL file as the body, "
            "Content-Type application/x-ndjson (curl: --data-binary @items.jsonl "
            "-H 'Content-Type: application/x-ndjson'; -d and -F change the lines)"
        )
