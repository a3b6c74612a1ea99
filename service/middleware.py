"""Pure ASGI middleware: body-size limit and request metrics (no per-request threads)."""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.errors import error_response
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


class RequestMetrics:
    """Count and time every request by its route template (bounded label cardinality)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def record(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, record)
        finally:
            self.metrics.observe_request(_route(scope), status, time.perf_counter() - start)


def _route(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else "unmatched"
