"""What the gateway and a sandbox worker say about sessions, through Redis.

Each worker that holds sessions (a *host*) has a name of its own incarnation (a restarted
worker is a new host: the old one's sessions are gone with it), a heartbeat key saying
how many sessions it holds, and a request list it alone reads. The gateway keeps which
host holds a session (and for whom) in a route key, pushes a `SessionCall` to that
host's list and waits for the `SessionAnswer` on a reply list private to the call.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from referee.service.sessions.schemas import ExecRequest, SessionCreate

HOST_PREFIX = "referee:sessionhost:"
ROUTE_PREFIX = "referee:session:"
ENDED_PREFIX = "referee:session-ended:"
TENANT_PREFIX = "referee:sessions-of:"
REPLY_PREFIX = "referee:session-reply:"
HEARTBEAT_S = 2.0
HEARTBEAT_TTL_S = 8
REPLY_TTL_S = 300
ENDED_TTL_S = 3600


def heartbeat_key(host: str) -> str:
    return f"{HOST_PREFIX}{host}"


def requests_key(host: str) -> str:
    return f"{HOST_PREFIX}{host}:requests"


def route_key(session_id: str) -> str:
    return f"{ROUTE_PREFIX}{session_id}"


def ended_key(session_id: str) -> str:
    return f"{ENDED_PREFIX}{session_id}"


def tenant_key(tenant: str) -> str:
    return f"{TENANT_PREFIX}{tenant or '-'}"


Op = Literal["create", "get", "execute", "write_file", "read_file", "files", "snapshot", "delete"]


class SessionCall(BaseModel):
    """One request for a host. ``deadline`` is wall-clock: a call found after it is
    dropped (its caller stopped waiting). ``data`` is base64 (a file's bytes)."""

    op: Op
    tenant: str
    session_id: str
    reply: str
    deadline: float
    create: SessionCreate | None = None
    execute: ExecRequest | None = None
    path: str | None = None
    data: str | None = None


class CallError(BaseModel):
    status: int
    code: str
    message: str


class SessionAnswer(BaseModel):
    """A host's answer: the call's value (JSON; bytes as base64), or the API error it
    raised, which the gateway raises again as it is."""

    value: Any = None
    error: CallError | None = None


class HostLoad(BaseModel):
    """A host's heartbeat value."""

    open: int
    most: int
