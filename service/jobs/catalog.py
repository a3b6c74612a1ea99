"""The embedded jobs' catalog: one SQLite database (stdlib ``sqlite3``, WAL) in the data
directory, beside each job's upload and results files.

Durability rule: a job's results file is appended batch by batch, flushed and fsynced,
and only then is its progress committed here (`Progress`: lines done, counts by status,
and the byte offsets reached in both files). After a crash the committed progress is
the truth: bytes of the results file past ``results_offset`` (a torn or uncommitted
batch) are cut off and scoring resumes at ``items_offset`` of the upload, so every
line gets exactly one result, in order. Calls are serialised by a lock; callers on an
event loop run the writes in a thread.
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from referee.service.jobs.status import JobState, JobStatus

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    state TEXT NOT NULL,
    total INTEGER NOT NULL,
    done INTEGER NOT NULL DEFAULT 0,
    counts TEXT NOT NULL DEFAULT '{}',
    created REAL NOT NULL,
    finished REAL,
    reason TEXT,
    results_offset INTEGER NOT NULL DEFAULT 0,
    items_offset INTEGER NOT NULL DEFAULT 0,
    items_line INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS jobs_by_tenant ON jobs (tenant, created);
"""


@dataclass
class Progress:
    """How far a job's durable results reach: lines done, counts by status, bytes of
    the results file, and the upload's byte offset and line number to resume from."""

    done: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    results_offset: int = 0
    items_offset: int = 0
    items_line: int = 0


@dataclass
class Record:
    """A catalog row: the job's status and its committed progress."""

    status: JobStatus
    progress: Progress


class JobCatalog:
    """The catalog at ``path``; the database is created on first use."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()

    def create(self, job_id: str, tenant: str, total: int, created: float) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO jobs (id, tenant, state, total, created) VALUES (?, ?, ?, ?, ?)",
                (job_id, tenant, JobState.RUNNING.value, total, created),
            )

    def advance(self, job_id: str, progress: Progress) -> None:
        """Commit ``progress`` (its results must already be on disk)."""
        with self._lock:
            self._db.execute(
                "UPDATE jobs SET done=?, counts=?, results_offset=?, items_offset=?, "
                "items_line=? WHERE id=?",
                (
                    progress.done,
                    orjson.dumps(progress.counts).decode(),
                    progress.results_offset,
                    progress.items_offset,
                    progress.items_line,
                    job_id,
                ),
            )

    def set_state(
        self, job_id: str, state: JobState, when: float | None, reason: str | None = None
    ) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE jobs SET state=?, finished=?, reason=? WHERE id=?",
                (state.value, when, reason, job_id),
            )

    def get(self, job_id: str) -> Record | None:
        with self._lock:
            row = self._db.execute(f"SELECT {_COLUMNS} FROM jobs WHERE id=?", (job_id,)).fetchone()
        return None if row is None else _record(row)

    def of_tenant(self, tenant: str) -> list[Record]:
        """``tenant``'s jobs, newest first."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM jobs WHERE tenant=? ORDER BY created DESC", (tenant,)
            ).fetchall()
        return [_record(row) for row in rows]

    def unfinished(self) -> list[Record]:
        """Jobs a stopped server left running (or failed), oldest first: to resume."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM jobs WHERE state IN (?, ?) ORDER BY created",
                (JobState.RUNNING.value, JobState.FAILED.value),
            ).fetchall()
        return [_record(row) for row in rows]

    def expired(self, cutoff: float) -> list[str]:
        """Ids of jobs that finished before ``cutoff``."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM jobs WHERE finished IS NOT NULL AND finished < ? AND state != ?",
                (cutoff, JobState.FAILED.value),
            ).fetchall()
        return [row[0] for row in rows]

    def delete(self, job_id: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM jobs WHERE id=?", (job_id,))

    def close(self) -> None:
        with self._lock:
            self._db.close()


_COLUMNS = (
    "id, tenant, state, total, done, counts, created, finished, reason, "
    "results_offset, items_offset, items_line"
)


def _record(row: tuple[object, ...]) -> Record:
    (job_id, tenant, state, total, done, counts, created, finished, reason, *offsets) = row
    decoded: dict[str, int] = orjson.loads(str(counts))
    status = JobStatus(
        id=str(job_id),
        state=JobState(str(state)),
        total=int(str(total)),
        done=int(str(done)),
        counts=decoded,
        created=float(str(created)),
        finished=None if finished is None else float(str(finished)),
        tenant=str(tenant),
        reason=None if reason is None else str(reason),
    )
    results_offset, items_offset, items_line = (int(str(o)) for o in offsets)
    progress = Progress(int(str(done)), dict(decoded), results_offset, items_offset, items_line)
    return Record(status, progress)
