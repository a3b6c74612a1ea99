"""Pure ASGI middleware: body-size limit and request observation (no per-request threads)."""

from __future__ import annotations

import logging
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.errors import error_response
from service.logs import request_id
from service.metrics import Metrics


class BodyLimit:
    """Reject bodies over ``max_bytes`` with 413 before the app reads them.

    A declared Content-Length over the limit is refused at once; a chunked body is
    counted as it arrives and refused when it crosses the limit. Paths under a
    ``streamed`` prefix (job uploads) have their own limit, are never buffered here, and
    count their own bytes as they stream.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, streamed: dict[str, int]) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.streamed = streamed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        stream_limit = self._stream_limit(scope)
        if stream_limit is not None:
            if declared is not None and declared > stream_limit:
                await self._refuse(scope, receive, send, stream_limit)
            else:
                await self.app(scope, receive, send)
            return
        if declared is not None and declared > self.max_bytes:
            await self._refuse(scope, receive, send, self.max_bytes)
            return
        if declared is not None:
            await self.app(scope, receive, send)
            return
        body, ok = await self._buffer(receive)
        if not ok:
            await self._refuse(scope, receive, send, self.max_bytes)
            return
        await self.app(scope, _replay(body), send)

    def _stream_limit(self, scope: Scope) -> int | None:
        path = scope.get("path", "")
        for prefix, limit in self.streamed.items():
            if path.startswith(prefix):
                return limit
        return None

    async def _buffer(self, receive: Receive) -> tuple[bytes, bool]:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"", True
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return b"", False
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), True

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, limit: int) -> None:
        message = f"request body exceeds the limit of {limit} bytes"
        response = error_response(413, "payload_too_large", message, {"Connection": "close"})
        await response(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    for key, value in scope.get("headers", ()):
        if key == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


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
