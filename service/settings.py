"""Service settings: one pydantic-settings class, ``REFEREE_`` environment prefix.

Read once by whoever builds the app or the CLI command (never at import time) and passed
down explicitly, so tests construct their own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from referee.sandbox.sessions import SessionLimits
from referee.service.adapters.mapping import ItemMapping
from referee.service.jobs.quota import QuotaRules
from referee.verifiers.engines import EngineSettings


def default_data_dir() -> Path:
    """The platform's per-user data directory for referee (XDG on Linux)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "referee"


def _default_workers() -> int:
    return max(1, os.cpu_count() or 1)


class RunCaps(BaseModel):
    """The most a ``/run_code`` request may ask for (``REFEREE_RUN_CAPS``, JSON); more is
    capped and the response's ``message`` says so. ``memory_limit_MB`` -1 means
    ``memory_mb``."""

    model_config = ConfigDict(extra="forbid")

    run_s: float = Field(default=30.0, gt=0, le=600)
    compile_s: float = Field(default=60.0, gt=0, le=600)
    memory_mb: int = Field(default=4096, ge=16, le=65536)


def _most_a_session_may_ask() -> SessionLimits:
    return SessionLimits(
        memory_mb=8192,
        disk_mb=8192,
        processes=1024,
        cpu_s=86400,
        output_bytes=16 << 20,
        file_size_mb=4096,
    )


class SessionSettings(BaseModel):
    """Stateful sandbox sessions (``REFEREE_SESSIONS``, JSON). ``max_open`` bounds the
    sessions one process holds (the gateway when embedded, each sandbox worker when
    distributed; 0 turns sessions off there); ``max_per_key`` those one API key holds.
    A session ends ``idle_ttl_s`` after its last request or ``ttl_s`` after it started
    (a client may ask for less, or up to ``max_ttl_s``)."""

    model_config = ConfigDict(extra="forbid")

    max_open: int = Field(default=256, ge=0, le=100_000)
    max_per_key: int = Field(default=32, ge=1)
    ttl_s: float = Field(default=3600.0, gt=0)
    max_ttl_s: float = Field(default=24 * 3600.0, gt=0)
    idle_ttl_s: float = Field(default=600.0, gt=0)
    max_exec_s: float = Field(default=300.0, gt=0, le=3600)
    """The longest time limit one command may ask for."""
    max_file_bytes: int = Field(default=16 << 20, ge=1024, le=1 << 30)
    """The largest file moved in or out, and the most a snapshot for scoring holds."""
    max_limits: SessionLimits = Field(default_factory=_most_a_session_may_ask)
    """The most a session may ask for, limit by limit; more is refused (422)."""


class Settings(BaseSettings):
    """Every knob of the gateway and the embedded executor."""

    model_config = SettingsConfigDict(env_prefix="REFEREE_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=0, le=65535)

    api_keys: Annotated[list[SecretStr], NoDecode] = Field(default_factory=list)
    """Bearer keys; when any is set, every route but /healthz and /readyz needs one.
    From the environment: comma-separated."""

    metrics_public: bool = False
    """Serve /metrics without an API key (for a Prometheus that cannot send one)."""
    docs_public: bool = False
    """Serve /docs and /openapi.json without an API key (with keys set they need
    one, like every route but the health checks)."""
    log_json: bool = True
    log_level: str = "INFO"
    worker_metrics_port: int | None = Field(default=None, ge=0, le=65535)
    """A worker serves its own Prometheus metrics on this port (items it scored)."""

    max_connections: int = Field(default=1000, ge=1)
    """Open connections plus running requests; beyond it new ones get 503 (uvicorn)."""
    header_timeout_s: float = Field(default=10.0, gt=0)
    """A request's headers must be complete this long after its first byte."""
    body_timeout_s: float = Field(default=30.0, gt=0)
    """Longest gap while a body arrives; past this long, it must also average
    ``min_body_bytes_per_s`` (a body trickling in holds a connection for nothing)."""
    min_body_bytes_per_s: float = Field(default=1024.0, ge=0)

    max_items_per_request: int = Field(default=10_000, ge=1)
    max_body_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    max_json_containers: int = Field(default=500_000, ge=100)
    """JSON objects plus arrays one request body may hold; a body over it is refused
    before it is decoded (decoding costs far more memory than the body's bytes)."""
    max_field_chars: int = Field(default=1_000_000, ge=1)
    """Longest prompt, response or reference text accepted per item; longer is ``invalid``."""

    max_pending_items: int = Field(default=200_000, ge=1)
    """Items being scored at once across requests; beyond it new requests get 429."""

    default_deadline_s: float = Field(default=60.0, gt=0)
    max_deadline_s: float = Field(default=600.0, gt=0)
    run_caps: RunCaps = Field(default_factory=RunCaps)
    run_queue_s: float = Field(default=5.0, gt=0)
    """How long a ``/run_code`` or ``/v1/run`` request may wait for a free sandbox on top
    of its own limits (compile + runs) before it is answered 504 ``deadline_exceeded``
    (retryable): well inside the client's timeout (verl gives up after compile + run +
    10 s and retries only a 504), instead of queueing past it."""
    item_timeout_s: float = Field(default=10.0, gt=0)
    """Hard limit for one item in a worker process; past it the worker is killed."""

    cpu_workers: int = Field(default_factory=_default_workers, ge=1)
    sandbox_workers: int = Field(default_factory=_default_workers, ge=1)
    worker_memory_mb: int = Field(default=4096, ge=64)
    """Address-space limit of each worker process, so a runaway item cannot take the host."""

    broker_url: str | None = None
    """``redis://...`` switches to the distributed executor (Celery on Redis). Job state,
    replies and worker heartbeats live in the same Redis."""
    visibility_timeout_s: int = Field(default=3600, ge=5)
    """Seconds before Redis redelivers a task whose worker took it and vanished. Task
    time limits stay below it so a slow task is never delivered twice while running."""

    @property
    def task_time_limit_s(self) -> float:
        """Hard limit of one task: below the visibility timeout, so a task that is still
        running is never delivered to a second worker."""
        return self.visibility_timeout_s * 0.9

    max_queue_depth: int = Field(default=10_000, ge=1)
    """Tasks waiting in one pool's queue beyond which new work gets 429."""
    max_job_bytes: int = Field(default=4 * 1024**3, ge=1024)
    """Largest JSONL upload to ``POST /v1/jobs`` (streamed to Redis, never held whole)."""
    data_dir: Path = Field(default_factory=default_data_dir)
    """Where the service keeps what must outlive it (embedded jobs: their catalog,
    uploads and results, under ``jobs/``). Default: ``$XDG_DATA_HOME/referee``, else
    ``~/.local/share/referee``; ``/data`` in the image and the Helm chart. Never /tmp."""

    @property
    def jobs_dir(self) -> Path:
        return self.data_dir / "jobs"

    job_ttl_s: int = Field(default=7 * 24 * 3600, ge=60)
    """How long a finished job's items and results stay in Redis."""
    max_jobs_per_key: int = Field(default=100, ge=1)
    """Unexpired jobs (running or finished) one API key may hold."""
    job_quota_bytes: int = Field(default=16 * 1024**3, ge=1024)
    """Bytes one API key's unexpired jobs may hold (embedded: uploads and results on
    disk; Redis: uploads)."""
    job_disk_reserve_bytes: int = Field(default=1024**3, ge=0)
    """Embedded mode: uploads stop (429) when less than this is free on ``data_dir``."""

    def job_quota(self) -> QuotaRules:
        """The per-key job quota these settings describe."""
        return QuotaRules(self.max_jobs_per_key, self.job_quota_bytes, self.job_disk_reserve_bytes)

    rate_limit_items_per_s: float | None = Field(default=None, gt=0)
    """Per API key: sustained items per second (token bucket in Redis); None = off."""
    rate_limit_burst: int = Field(default=10_000, ge=1)
    sessions: SessionSettings = Field(default_factory=SessionSettings)
    openrlhf_mapping: ItemMapping = Field(
        default_factory=lambda: ItemMapping(verifier="math", reference_column="answer")
    )
    """How ``POST /get_reward`` turns OpenRLHF's query/prompt/label into an item (JSON)."""
    chunk_size: int | None = Field(default=None, ge=1)
    """Items per Celery task for every pool, overriding the per-pool defaults (benchmarks
    use 1 to measure one-task-per-item dispatch)."""

    engines: EngineSettings = Field(default_factory=EngineSettings.from_env, exclude=True)
    """The scoring engines' own settings (``REFEREE_SANDBOX_*``, ``REFEREE_JUDGE_*``,
    ``REFEREE_RM_*``, ``REFEREE_SQL_FIXTURES``, ``REFEREE_CPU_BUDGET_S``), read with the
    rest, handed down."""

    @field_validator("api_keys", mode="before")
    @classmethod
    def _split_keys(cls, value: object) -> object:
        if isinstance(value, str):
            return [key.strip() for key in value.split(",") if key.strip()]
        return value
