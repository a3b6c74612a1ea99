"""What one API key may keep in batch jobs, and the limits an upload streams against.

A key may hold at most ``max_jobs`` jobs that have not expired (running or finished) and
``max_bytes`` stored for them (embedded mode counts uploads and results on disk; Redis
mode counts uploads). A finished job is deleted early with ``DELETE /v1/jobs/{id}``.
Embedded mode also keeps ``reserve_bytes`` free on the spool's file system, whatever
the keys' quotas add up to. Past a limit the upload stops at once: 413 when this one
upload is over the per-upload size, 429 ``quota_exceeded`` when the key's quota ran out,
507 ``insufficient_storage`` when the disk reserve did.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from referee.service.http.errors import ApiError, PayloadTooLarge


class QuotaExceeded(ApiError):
    status_code, code = 429, "quota_exceeded"


class InsufficientStorage(ApiError):
    """The server's disk has no room for this upload: 507, before the job exists."""

    status_code, code = 507, "insufficient_storage"


@dataclass(frozen=True)
class QuotaRules:
    """Per key: unexpired jobs and stored bytes; per host: bytes kept free (embedded)."""

    max_jobs: int
    max_bytes: int
    reserve_bytes: int = 0


@dataclass
class UploadLimit:
    """Checks a streaming upload's running size against its limits (see module docs)."""

    max_upload: int
    quota_left: int
    spool: Path | None = None
    reserve_bytes: int = 0
    seen: int = 0
    """Bytes checked so far."""

    def check(self, size: int) -> None:
        """Raise when ``size`` bytes uploaded so far are past a limit."""
        self.seen = size
        if size > self.max_upload:
            raise PayloadTooLarge(f"job upload exceeds the limit of {self.max_upload} bytes")
        if size > self.quota_left:
            raise QuotaExceeded(
                "job upload exceeds this key's job storage quota "
                f"({self.quota_left} bytes left); delete finished jobs or wait for them to expire"
            )
        if self.spool is not None and shutil.disk_usage(self.spool).free < self.reserve_bytes:
            raise InsufficientStorage(
                "the server's job storage is full (REFEREE_JOB_DISK_RESERVE_BYTES must stay "
                "free in REFEREE_DATA_DIR); retry later"
            )


def admit(rules: QuotaRules, jobs: int, used: int) -> int:
    """Bytes a key holding ``jobs`` jobs and ``used`` bytes may still upload; raises
    `QuotaExceeded` when it may not start another job."""
    if jobs >= rules.max_jobs:
        raise QuotaExceeded(
            f"this key already holds {jobs} jobs (limit {rules.max_jobs}); delete finished "
            "jobs or wait for them to expire"
        )
    left = rules.max_bytes - used
    if left <= 0:
        raise QuotaExceeded(
            f"this key's jobs hold {used} bytes (quota {rules.max_bytes}); delete finished "
            "jobs or wait for them to expire"
        )
    return left
