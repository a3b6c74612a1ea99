"""SandboxFusion's ``/run_jupyter`` on a short-lived session: the cells run one after
another in one Python session of the caller's (so in distributed mode, on a sandbox
worker), then the requested files are read back and the session is deleted.

A cell over ``cell_timeout`` is stopped inside the session and reported as a cell whose
error is a ``TimeoutError``; the next cells run on. Past ``total_timeout`` (the cells'
time together) the run is ``Failed`` with a ``TimeLimitExceeded`` driver, as is a
session that stopped answering; one whose interpreter died (out of memory, ``os._exit``)
is ``Failed`` with an ``Error`` driver and the reason in ``message``; a sandbox that
could not start is ``SandboxError``.
"""

from __future__ import annotations

import base64
import contextlib
import math
import time
from typing import Literal

from referee.sandbox.sessions import ExecOutcome, SessionKind, SessionLimits
from referee.service.http.errors import ApiError, SessionGone, Unavailable
from referee.service.http.run_schemas import (
    CellResult,
    CommandRunResult,
    RunJupyterRequest,
    RunJupyterResponse,
    decoded_files,
)
from referee.service.sessions.backend import SessionBackend
from referee.service.sessions.schemas import ExecRequest, SessionCreate
from referee.service.settings import RunCaps

_TTL_MARGIN_S = 60.0
Stopped = Literal["TimeLimitExceeded", "Error"]


class Notebook:
    """One ``/run_jupyter`` request, run for ``tenant`` on ``sessions``."""

    def __init__(
        self,
        sessions: SessionBackend,
        tenant: str,
        request: RunJupyterRequest,
        caps: RunCaps,
        memory_mb: int,
    ) -> None:
        self.sessions = sessions
        self.tenant = tenant
        self.request = request
        self.total_s = request.total_s(caps)
        self.notes = request.capped(caps)
        self.memory_mb = memory_mb

    def session(self) -> SessionCreate:
        """The session the cells run in; ValueError naming ``files.<name>``."""
        limits = SessionLimits(memory_mb=self.memory_mb, cpu_s=self.total_s + 5)
        return SessionCreate(
            kind=SessionKind.PYTHON,
            limits=limits,
            files=decoded_files(self.request.files),
            ttl_s=self.total_s + _TTL_MARGIN_S,
        )

    async def run(self, create: SessionCreate) -> RunJupyterResponse:
        """Run the cells; API errors of the session's creation propagate (429, 503...)."""
        try:
            info = await self.sessions.create(self.tenant, create)
        except Unavailable as exc:
            return RunJupyterResponse(status="SandboxError", message=exc.message)
        try:
            return await self._cells(info.id)
        finally:
            with contextlib.suppress(ApiError):  # gone already: nothing left to free
                await self.sessions.delete(self.tenant, info.id)

    async def _cells(self, session_id: str) -> RunJupyterResponse:
        started = time.monotonic()
        cells: list[CellResult] = []
        for code in self.request.cells:
            left = self.total_s - (time.monotonic() - started)
            cell_limit = self.request.cell_timeout or math.inf
            if left <= 0:
                return self._failed("TimeLimitExceeded", started, "total_timeout passed")
            request = ExecRequest(code=code, timeout_s=min(cell_limit, left))
            try:
                outcome = await self.sessions.execute(self.tenant, session_id, request)
            except SessionGone as exc:
                stuck = "stopped answering" in exc.message
                return self._failed("TimeLimitExceeded" if stuck else "Error", started, exc.message)
            if outcome.status == "timeout" and cell_limit > left:
                return self._failed("TimeLimitExceeded", started, "total_timeout passed")
            cells.append(_cell(outcome, cell_limit))
        driver = CommandRunResult(
            status="Finished",
            execution_time=time.monotonic() - started,
            return_code=0,
            stdout="",
            stderr="",
        )
        files = await self._fetched(session_id)
        message = "; ".join(self.notes)
        return RunJupyterResponse(
            status="Success", driver=driver, cells=cells, files=files, message=message
        )

    async def _fetched(self, session_id: str) -> dict[str, str]:
        files: dict[str, str] = {}
        for path in self.request.fetch_files:
            try:
                data = await self.sessions.read_file(self.tenant, session_id, path)
            except ApiError:
                continue  # as SandboxFusion: a file that cannot be read is left out
            files[path] = base64.b64encode(data).decode()
        return files

    def _failed(self, status: Stopped, started: float, why: str) -> RunJupyterResponse:
        driver = CommandRunResult(status=status, execution_time=time.monotonic() - started)
        message = "; ".join([why, *self.notes])
        return RunJupyterResponse(status="Failed", driver=driver, message=message)


def _cell(outcome: ExecOutcome, limit: float) -> CellResult:
    display = [
        {"text/plain": str(shown["text/plain"])}
        for shown in outcome.display
        if "text/plain" in shown
    ]
    error: list[dict[str, object]] = []
    if outcome.status == "timeout":
        message = f"the cell ran longer than {limit:g} s"
        error = [{"ename": "TimeoutError", "evalue": message, "traceback": []}]
    elif outcome.error is not None:
        error = [outcome.error.model_dump()]
    return CellResult(stdout=outcome.stdout, stderr=outcome.stderr, display=display, error=error)
