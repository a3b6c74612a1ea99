"""``POST /v1/run`` (raw compile + run + cases) and SandboxFusion's ``POST /run_code``.

The sandbox call blocks, so it runs in a thread; at most ``REFEREE_SANDBOX_WORKERS`` runs
at once per gateway (a semaphore), and a request that cannot finish (waiting included)
within ``REFEREE_DEFAULT_DEADLINE_S`` gets 504. A broken sandbox is ``sandbox_error`` /
``SandboxError`` in a 200 body, as SandboxFusion does; a request that can never run
(unknown language, bad file name) is 422.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, Request

from sandbox import Case, Limits, Program
from service.body import CappedRoute
from service.deps import SettingsDep
from service.errors import ApiError, PayloadTooLarge, Unprocessable
from service.run_schemas import RunCodeRequest, RunCodeResponse, RunRequest, RunResponse
from service.schemas import ErrorResponse
from verifiers.code.comparison import Comparator, Tolerance
from verifiers.code.execution import Execution, execute

router = APIRouter(tags=["sandbox"], route_class=CappedRoute)
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 413, 422, 504)
}


class DeadlineExceeded(ApiError):
    status_code, code = 504, "deadline_exceeded"


@router.post("/v1/run", response_model=RunResponse, responses=_ERRORS)
async def run(body: RunRequest, request: Request, settings: SettingsDep) -> RunResponse:
    """Compile once and run every case in the sandbox; compare outputs given ``expected``."""
    _check_sizes(body, settings.max_field_chars)
    expected = [case.expected for case in body.cases]
    done = await _execute(
        request,
        settings.default_deadline_s,
        settings.sandbox_workers,
        body.program(),
        body.sandbox_cases(),
        body.limits.sandbox_limits(),
        expected,
        body.compare,
        body.tolerance(),
    )
    return RunResponse.from_execution(done)


@router.post("/run_code", response_model=RunCodeResponse, responses=_ERRORS)
async def run_code(
    body: RunCodeRequest, request: Request, settings: SettingsDep
) -> RunCodeResponse:
    """SandboxFusion-compatible single run (same request and response fields)."""
    _require_short("code", body.code, settings.max_field_chars)
    _require_short("stdin", body.stdin or "", settings.max_field_chars)
    try:
        program = Program(language=body.sandbox_language(), source=body.code)
        case = body.sandbox_case()
    except ValueError as exc:
        raise Unprocessable(str(exc)) from None
    done = await _execute(
        request,
        settings.default_deadline_s,
        settings.sandbox_workers,
        program,
        [case],
        body.limits(),
        [None],
        "lines",
        Tolerance(),
    )
    return RunCodeResponse.from_execution(done)


async def _execute(
    request: Request,
    deadline_s: float,
    concurrency: int,
    program: Program,
    cases: Sequence[Case],
    limits: Limits,
    expected: Sequence[str | None],
    how: Comparator,
    tolerance: Tolerance,
) -> Execution:
    gate = _gate(request, concurrency)

    async def guarded() -> Execution:
        # The slot is freed when the sandbox thread really ends, not when the request
        # stops waiting: a timed-out run still counts against the limit while it runs.
        await gate.acquire()
        work = asyncio.ensure_future(
            asyncio.to_thread(execute, program, cases, limits, expected, how, tolerance)
        )
        work.add_done_callback(lambda _: gate.release())
        return await asyncio.shield(work)

    try:
        return await asyncio.wait_for(guarded(), timeout=deadline_s)
    except TimeoutError:
        raise DeadlineExceeded(f"the run did not finish within {deadline_s:g} s") from None
    except ValueError as exc:
        raise Unprocessable(str(exc)) from None


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


def _gate(request: Request, concurrency: int) -> asyncio.Semaphore:
    """The app's run semaphore, made on first use inside its event loop."""
    gate: asyncio.Semaphore | None = getattr(request.app.state, "run_gate", None)
    if gate is None:
        gate = asyncio.Semaphore(concurrency)
        request.app.state.run_gate = gate
    return gate
