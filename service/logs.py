"""Structured logs: one JSON object per line, carrying the request or job id in context.

`configure` is called by the CLI when a process starts (never at import). The request-id
middleware puts an id (the client's ``X-Request-ID`` or a fresh one) in a context
variable that every log line of that request carries, and echoes it in the response.
"""

from __future__ import annotations

import contextvars
import logging
import time
import uuid
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)

_RESERVED = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "msg", "request_id"?, ...extra}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        rid = request_id.get()
        if rid is not None:
            entry["request_id"] = rid
        entry.update({k: v for k, v in vars(record).items() if k not in _RESERVED})
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


def configure(json_logs: bool, level: str) -> None:
    """Route every logger (uvicorn's and Celery's included) through one handler."""
    handler = logging.StreamHandler()
    if json_logs:
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "celery"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True


class RequestIds:
    """Give every request an id (``X-Request-ID`` if the client sent a sane one) and log
    its outcome: failures at warning/error, everything else at debug."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.log = logging.getLogger("referee.http")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = _client_id(scope) or uuid.uuid4().hex
        token = request_id.set(rid)
        start, status = time.perf_counter(), 500

        async def stamped(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", []).append((b"x-request-id", rid.encode()))
            await send(message)

        try:
            await self.app(scope, receive, stamped)
        finally:
            elapsed = round((time.perf_counter() - start) * 1000, 2)
            level = (
                logging.ERROR
                if status >= 500
                else logging.WARNING
                if status >= 400
                else logging.DEBUG
            )
            self.log.log(
                level,
                "request",
                extra={
                    "method": scope["method"],
                    "path": scope["path"],
                    "status": status,
                    "elapsed_ms": elapsed,
                },
            )
            request_id.reset(token)


def _client_id(scope: Scope) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == b"x-request-id" and 0 < len(value) <= 128 and value.isascii():
            return bytes(value).decode()
    return None
