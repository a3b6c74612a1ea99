"""The app factory: builds the gateway from settings; nothing happens at import time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI

from referee.sandbox.sessions import Launcher
from referee.service.distributed.executor import CeleryExecutor
from referee.service.execution.dispatch import Dispatcher
from referee.service.execution.executor import EmbeddedExecutor, Executor
from referee.service.http.admission import Admission, AdmissionRules
from referee.service.http.deps import require_api_key
from referee.service.http.disconnect import CancelOnDisconnect
from referee.service.http.docs import ASSETS, DOCS_PATHS, install_docs
from referee.service.http.errors import install_error_handlers
from referee.service.http.middleware import RequestObserver
from referee.service.http.path_key import PathKey
from referee.service.http.rate_limit import RateLimiter
from referee.service.http.responses import JSONBytes
from referee.service.http.routes import (
    graders,
    health,
    jobs,
    logprobs,
    openrlhf,
    run,
    score,
    sessions,
    traffic,
    verifiers,
)
from referee.service.http.routes.ui import ASSETS as UI_ASSETS
from referee.service.http.routes.ui import UI_PATHS, install_ui
from referee.service.jobs.backend import JobBackend, JobService
from referee.service.jobs.local import LocalJobs
from referee.service.jobs.redis_store import JobStore
from referee.service.metrics import Metrics
from referee.service.preflight import Problem, check_start, log_problems
from referee.service.sessions.backend import SessionBackend
from referee.service.sessions.local import LocalSessions
from referee.service.sessions.remote import RemoteSessions
from referee.service.settings import Settings
from referee.verifiers.base import Closable
from referee.verifiers.builtin import default_registry
from referee.verifiers.registry import Registry

DESCRIPTION = """Verifiable rewards for RL on language models: math, code, rubric judges,
reward models and rule rewards behind one endpoint. Every item gets a status
(`ok`, `invalid`, `error`, `timeout`); infrastructure failures are never a reward of 0."""


def build_executor(settings: Settings, registry: Registry) -> Executor:
    """The executor the settings ask for; the embedded one unless a broker is set."""
    if settings.broker_url:
        return CeleryExecutor(settings)
    return EmbeddedExecutor(settings, registry)


def create_app(
    settings: Settings | None = None,
    registry: Registry | None = None,
    executor: Executor | None = None,
    problems: list[Problem] | None = None,
) -> FastAPI:
    """A ready-to-serve app. Pass ``settings``/``registry``/``executor`` to override, and
    ``problems`` when the start-up check already ran (`referee serve` prints it first);
    otherwise the app runs it as it starts."""
    settings = settings or Settings()
    registry = registry or default_registry(settings.engines)
    executor = executor or build_executor(settings, registry)
    metrics = Metrics(executor.readiness, registry.all())

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        found = problems
        if found is None:
            embedded = not isinstance(executor, CeleryExecutor)
            found = await asyncio.to_thread(
                check_start, registry, settings.engines, embedded, settings.item_timeout_s
            )
            log_problems(found)
        app.state.dispatcher.disable(found)
        await executor.start()
        await app.state.jobs.start()
        await app.state.sessions.start()
        try:
            yield
        finally:
            await app.state.sessions.close()
            await app.state.jobs.close()
            await executor.close()
            for verifier in registry.all():
                if isinstance(verifier, Closable):
                    await verifier.aclose()

    app = FastAPI(
        title="referee",
        version="0.1.0",
        description=DESCRIPTION,
        lifespan=lifespan,
        default_response_class=JSONBytes,
        docs_url=None,
        redoc_url=None,
    )
    install_docs(app)
    install_ui(app)
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.dispatcher = Dispatcher(settings, registry, executor, metrics)
    app.state.jobs = build_jobs(settings, registry, executor, app.state.dispatcher)
    app.state.rate_limiter = build_rate_limiter(settings, executor)
    app.state.sessions = build_sessions(settings, executor)
    if isinstance(app.state.sessions, LocalSessions):  # distributed: each worker's own
        local: LocalSessions = app.state.sessions
        metrics.count_sessions(lambda: local.count)
    install_error_handlers(app)
    protected = [Depends(require_api_key)]
    app.include_router(health.router)
    app.include_router(
        health.metrics_router, dependencies=[] if settings.metrics_public else protected
    )
    for module in (score, logprobs, jobs, verifiers, openrlhf, graders, run, sessions, traffic):
        app.include_router(module.router, dependencies=protected)
    app.add_middleware(CancelOnDisconnect)
    app.add_middleware(Admission, rules=admission_rules(settings))
    app.add_middleware(RequestObserver, metrics=metrics)
    app.add_middleware(PathKey)  # outermost: nothing else ever sees a key in a path
    return app


def admission_rules(settings: Settings) -> AdmissionRules:
    """Who `Admission` lets through for these settings: health checks always public, the
    docs and /metrics when the settings say so."""
    public = {"/healthz", "/readyz", *UI_PATHS}  # the page holds no data; its reads need a key
    if settings.docs_public:
        public |= DOCS_PATHS
    if settings.metrics_public:
        public.add("/metrics")
    return AdmissionRules(
        keys=[key.get_secret_value().encode() for key in settings.api_keys],
        public=frozenset(public),
        public_prefixes=(ASSETS, UI_ASSETS),  # page files: no data of ours
        max_body_bytes=settings.max_body_bytes,
        streamed={"/v1/jobs": settings.max_job_bytes},
    )


def build_rate_limiter(settings: Settings, executor: Executor) -> RateLimiter | None:
    """Per-key limits when configured; shared through Redis in distributed mode."""

    if settings.rate_limit_items_per_s is None:
        return None
    client = executor.redis if isinstance(executor, CeleryExecutor) else None
    return RateLimiter(settings.rate_limit_items_per_s, settings.rate_limit_burst, client)


def build_sessions(settings: Settings, executor: Executor) -> SessionBackend:
    """Sessions held here when embedded; on the sandbox workers when distributed."""
    if isinstance(executor, CeleryExecutor):
        return RemoteSessions(settings.sessions, executor.redis)
    return LocalSessions(settings.sessions, Launcher(settings.engines.sandbox))


def build_jobs(
    settings: Settings, registry: Registry, executor: Executor, dispatcher: Dispatcher
) -> JobBackend:
    """Jobs in Redis with the distributed executor; spooled and scored here otherwise."""

    if not isinstance(executor, CeleryExecutor):
        return LocalJobs(
            dispatcher,
            settings.jobs_dir,
            settings.max_job_bytes,
            settings.job_ttl_s,
            settings.job_quota(),
        )
    store = JobStore(executor.redis, settings.job_ttl_s)
    return JobService(
        store,
        executor,
        registry,
        settings.max_job_bytes,
        settings.item_timeout_s,
        settings.job_quota(),
    )
