"""``/v1/sessions``: stateful sandbox sessions for multi-turn agents (create, exec, files,
list, delete). Decode, call the session backend for the caller's tenant, encode."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Request, Response

from referee.sandbox.sessions import ExecOutcome
from referee.service.http.body import CappedRoute
from referee.service.http.deps import CallerDep
from referee.service.http.schemas import ErrorResponse
from referee.service.sessions.backend import SessionBackend
from referee.service.sessions.schemas import (
    ExecRequest,
    FileList,
    FileWritten,
    SessionCreate,
    SessionInfo,
    SessionList,
)

router = APIRouter(tags=["sessions"], route_class=CappedRoute)
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorResponse} for code in (401, 404, 409, 410, 413, 422, 429, 503, 507)
}
SessionId = Annotated[
    str, Path(pattern=r"^[0-9a-f]{32}$", description="The id POST /v1/sessions gave")
]
FilePath = Annotated[
    str,
    Path(
        min_length=1,
        max_length=4096,
        description="Relative to the session's directory (no leading /, no ..)",
    ),
]


async def get_sessions(request: Request) -> SessionBackend:
    sessions: SessionBackend = request.app.state.sessions
    return sessions


SessionsDep = Annotated[SessionBackend, Depends(get_sessions)]


@router.post("/v1/sessions", response_model=SessionInfo, status_code=201, responses=_ERRORS)
async def create(body: SessionCreate, sessions: SessionsDep, caller: CallerDep) -> SessionInfo:
    """Start a session (a Python interpreter, a bash shell or a SQLite database, each in a
    sandbox of its own) that keeps its state between commands until deleted or expired."""
    return await sessions.create(caller.ticket.tenant, body)


@router.get("/v1/sessions", response_model=SessionList, responses=_ERRORS)
async def listing(sessions: SessionsDep, caller: CallerDep) -> SessionList:
    """The caller's open sessions."""
    return SessionList(sessions=await sessions.of_tenant(caller.ticket.tenant))


@router.get("/v1/sessions/{session_id}", response_model=SessionInfo, responses=_ERRORS)
async def describe(session_id: SessionId, sessions: SessionsDep, caller: CallerDep) -> SessionInfo:
    return await sessions.get(caller.ticket.tenant, session_id)


@router.post("/v1/sessions/{session_id}/exec", response_model=ExecOutcome, responses=_ERRORS)
async def execute(
    session_id: SessionId, body: ExecRequest, sessions: SessionsDep, caller: CallerDep
) -> ExecOutcome:
    """Run one command in the session. ``status`` says whether it finished in time;
    ``exit_code``, ``error`` and ``display`` what it did. A session that could not answer
    is ``410 session_lost``, with the reason; one busy with another command, ``409``."""
    await caller.spend(1)
    return await sessions.execute(caller.ticket.tenant, session_id, body)


@router.get("/v1/sessions/{session_id}/files", response_model=FileList, responses=_ERRORS)
async def files(session_id: SessionId, sessions: SessionsDep, caller: CallerDep) -> FileList:
    return await sessions.files(caller.ticket.tenant, session_id)


@router.put(
    "/v1/sessions/{session_id}/files/{path:path}",
    response_model=FileWritten,
    responses=_ERRORS,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
            },
        }
    },
)
async def write_file(
    session_id: SessionId,
    path: FilePath,
    request: Request,
    sessions: SessionsDep,
    caller: CallerDep,
) -> FileWritten:
    """Write the request body, byte for byte, to ``path`` (directories are created)."""
    return await sessions.write_file(caller.ticket.tenant, session_id, path, await request.body())


@router.get(
    "/v1/sessions/{session_id}/files/{path:path}",
    response_class=Response,
    responses={**_ERRORS, 200: {"content": {"application/octet-stream": {}}}},
)
async def read_file(
    session_id: SessionId, path: FilePath, sessions: SessionsDep, caller: CallerDep
) -> Response:
    data = await sessions.read_file(caller.ticket.tenant, session_id, path)
    return Response(data, media_type="application/octet-stream")


@router.delete("/v1/sessions/{session_id}", status_code=204, responses=_ERRORS)
async def delete(session_id: SessionId, sessions: SessionsDep, caller: CallerDep) -> Response:
    """End the session now: everything it runs is killed, its files are gone."""
    await sessions.delete(caller.ticket.tenant, session_id)
    return Response(status_code=204)
