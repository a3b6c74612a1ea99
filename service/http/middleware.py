"""Pure ASGI middleware: request observation (no per-request threads)."""

from __future__ import annotations

import logging
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee.service.logs import request_id
from referee.service.metrics import Metrics


class RequestObserver:
    """Per request, with one wrapper and one clock: an id (the client's ``X-Request-ID``
    if sane, else fresh) set for every log line and echoed in the response; the count
    and latency by route template (bounded label cardinality); and a log line, at
    error/warning for failures and debug otherwise (built only when that level is on)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics
        self.log = logging.getLogger("referee.http")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = _client_id(scope) or uuid.uuid4().hex
        token = request_id.set(rid)
        start, status = time.perf_counter(), 500

        async def observed(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", []).append((b"x-request-id", rid.encode()))
            await send(message)

        try:
            await self.app(scope, receive, observed)
        finally:
            elapsed = time.perf_counter() - start
            self.metrics.observe_request(_route(scope), status, elapsed)
            self._log(scope, status, elapsed)
            request_id.reset(token)

    def _log(self, scope: Scope, status: int, elapsed: float) -> None:
        level = (
            logging.ERROR if status >= 500 else logging.WARNING if status >= 400 else logging.DEBUG
        )
        if self.log.isEnabledFor(level):
            extra = {
                "method": scope["method"],
                "path": scope["path"],
                "status": status,
                "elapsed_ms": round(elapsed * 1000, 2),
            }
            self.log.log(level, "request", extra=extra)


def _client_id(scope: Scope) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == b"x-request-id" and 0 < len(value) <= 128 and value.isascii():
            return bytes(value).decode()
    return None


def _route(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else "unmatched"
