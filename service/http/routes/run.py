"""``POST /v1/run`` (raw compile + run + cases) and SandboxFusion's ``POST /run_code`` and
``POST /run_jupyter`` (on a short-lived session: `service.sessions.notebook`).

A run is an item of the internal ``sandbox.run`` verifier (`verifiers.code.raw_run`),
scored through the dispatcher like any other: it waits in the sandbox pool's fair queue
under the caller's key, its worker is killed when the caller hangs up or the deadline
passes (then 504 with ``Retry-After``), and it runs wherever the executor runs sandbox
work. The deadline is the run's own worst case (compile + every case's wall limit) plus
``REFEREE_RUN_QUEUE_S`` of waiting, capped by ``REFEREE_DEFAULT_DEADLINE_S``: an
overloaded server answers a retryable 504 before the client's own timeout.

A broken sandbox is ``sandbox_error`` / ``SandboxError`` in a 200 body, as SandboxFusion
does; a request that can never run (unknown language, bad file name) is 422.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import APIRouter

from referee.sandbox import RunReport, SandboxStatus, languages
from referee.service.execution.dispatch import Budget
from referee.service.http.body import CappedRoute
from referee.service.http.deps import CallerDep, DispatcherDep, SettingsDep
from referee.service.http.errors import (
    ApiError,
    NotConfiguredError,
    PayloadTooLarge,
    Unprocessable,
)
from referee.service.http.routes.sessions import SessionsDep
from referee.service.http.run_schemas import (
    RunCodeRequest,
    RunCodeResponse,
    RunJupyterRequest,
    RunJupyterResponse,
    RunRequest,
    RunResponse,
)
from referee.service.http.schemas import ErrorResponse
from referee.service.sessions.notebook import Notebook
from referee.verifiers.code.execution import Execution, RunSpec, decode_execution
from referee.verifiers.code.raw_run import RAW_RUN
from referee.verifiers.types import NOT_CONFIGURED, Item, Status

router = APIRouter(tags=["sandbox"], route_class=CappedRoute)
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 413, 422, 429, 503, 504)
}


class DeadlineExceeded(ApiError):
    status_code, code = 504, "deadline_exceeded"


@router.post("/v1/run", response_model=RunResponse, responses=_ERRORS)
async def run(
    body: RunRequest, settings: SettingsDep, dispatcher: DispatcherDep, caller: CallerDep
) -> RunResponse:
    """Compile once and run every case in the sandbox; compare outputs given ``expected``."""
    _check_sizes(body, settings.max_field_chars)
    spec = RunSpec(
        program=body.program(),
        cases=body.sandbox_cases(),
        limits=body.limits.sandbox_limits(),
        expected=[case.expected for case in body.cases],
        compare=body.compare,
        abs_tol=body.abs_tol,
        rel_tol=body.rel_tol,
    )
    await caller.spend(len(spec.cases))
    return RunResponse.from_execution(await _execute(spec, settings, dispatcher, caller))


@router.post("/run_code", response_model=RunCodeResponse, responses=_ERRORS)
async def run_code(
    body: RunCodeRequest, settings: SettingsDep, dispatcher: DispatcherDep, caller: CallerDep
) -> RunCodeResponse:
    """SandboxFusion-compatible single run (same request and response fields)."""
    _require_short("code", body.code, settings.max_field_chars)
    _require_short("stdin", body.stdin or "", settings.max_field_chars)
    try:
        spec = RunSpec(
            program={"language": body.sandbox_language(), "source": body.code},
            cases=[body.sandbox_case()],
            limits=body.limits(settings.engines.sandbox.limits, settings.run_caps),
            expected=[None],
        )
    except ValueError as exc:
        raise Unprocessable(str(exc)) from None
    await caller.spend(1)
    done = await _execute(spec, settings, dispatcher, caller)
    return RunCodeResponse.from_execution(done, body.capped(settings.run_caps))


@router.post("/run_jupyter", response_model=RunJupyterResponse, responses=_ERRORS)
async def run_jupyter(
    body: RunJupyterRequest, settings: SettingsDep, sessions: SessionsDep, caller: CallerDep
) -> RunJupyterResponse:
    """SandboxFusion-compatible notebook run: the cells in order in a short-lived Python
    session (`service.sessions.notebook`; no Jupyter kernel)."""
    for index, cell in enumerate(body.cells):
        _require_short(f"cells.{index}", cell, settings.max_field_chars)
    memory_mb = min(settings.run_caps.memory_mb, settings.sessions.max_limits.memory_mb)
    notebook = Notebook(sessions, caller.ticket.tenant, body, settings.run_caps, memory_mb)
    try:
        create = notebook.session()
    except ValueError as exc:
        raise Unprocessable(str(exc)) from None
    await caller.spend(1)
    return await notebook.run(create)


async def _execute(
    spec: RunSpec, settings: SettingsDep, dispatcher: DispatcherDep, caller: CallerDep
) -> Execution:
    """Run ``spec`` as one internal item; map its result status to the routes' answers."""
    lang = languages.find(spec.program.language)
    compiles = lang is not None and lang.compile is not None
    worst = spec.limits.compile_wall_s * compiles + spec.limits.wall_s * len(spec.cases)
    deadline_s = min(settings.default_deadline_s, worst + settings.run_queue_s)
    budget = Budget(time.monotonic() + deadline_s, deadline_s, caller.ticket)
    item = Item(verifier=RAW_RUN, response="", reference=spec.model_dump(mode="json"))
    [result] = await dispatcher.score([item], budget, internal=True)
    message = result.error.message if result.error is not None else ""
    if result.status is Status.OK:
        return decode_execution(result.details["run"])
    if result.status is Status.TIMEOUT:
        raise DeadlineExceeded(
            f"the run did not finish within {deadline_s:g} s (its limits plus "
            f"{settings.run_queue_s:g} s of waiting for a sandbox): the server is busy, "
            f"retry ({message})",
            headers={"Retry-After": "1"},
        )
    if result.status is Status.INVALID:
        raise Unprocessable(message)
    if result.error is not None and result.error.code == NOT_CONFIGURED:
        raise NotConfiguredError(message)
    report = RunReport(sandbox_status=SandboxStatus.ERROR, message=message)
    return Execution(report, [])


def _check_sizes(body: RunRequest, limit: int) -> None:
    """Every text of a run within ``max_field_chars``, as an item's fields are (413 naming
    the field): copies of a huge source or stdin cost the gateway several times its size."""
    _require_short("source", body.source, limit)
    for name, text in body.files.items():
        _require_short(f"files.{name}", text, limit)
    for index, case in enumerate(body.cases):
        _require_short(f"cases.{index}.stdin", case.stdin, limit)
        _require_short(f"cases.{index}.expected", case.expected or "", limit)
        for name, text in case.files.items():
            _require_short(f"cases.{index}.files.{name}", text, limit)


def _require_short(field: str, text: str, limit: int) -> None:
    if len(text) > limit:
        raise PayloadTooLarge(f"{field}: {len(text)} characters exceeds the limit of {limit}")
