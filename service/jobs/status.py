"""What a job is at a moment: its one `JobState` enum and the `JobStatus` both stores
(embedded and Redis) report to the routes."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class JobState(StrEnum):
    """``uploading``: lines still arriving (Redis); ``running``: being scored;
    ``done``: one result per line; ``cancelled``: stopped by its owner (unscored lines
    read as ``cancelled`` results); ``failed``: its results could not be written (the
    reason says why; an embedded job resumes when the server starts again)."""

    UPLOADING = "uploading"
    RUNNING = "running"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"

    @property
    def finished(self) -> bool:
        """No more results will be written (until a failed job is resumed)."""
        return self in (JobState.DONE, JobState.CANCELLED, JobState.FAILED)


@dataclass
class JobStatus:
    id: str
    state: JobState
    total: int
    done: int
    counts: dict[str, int]
    created: float
    finished: float | None
    tenant: str = ""
    reason: str | None = None
    """Why a job is ``failed``."""
