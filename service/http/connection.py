"""Deadlines on a connection before its request is whole (uvicorn's httptools protocol).

uvicorn times out idle keep-alive connections, but not a request whose headers or body
arrive a byte at a time: a few hundred such connections would hold every slot. Here a
request's headers must be complete ``header_timeout_s`` after its first byte (or after
the connection opens); then its body must keep coming: no gap longer than
``body_timeout_s``, and, past that long, at least ``min_body_rate`` bytes per second on
average. A connection that misses a deadline is closed. The number of connections
(``max_connections``) is capped by uvicorn itself (``limit_concurrency``: 503 beyond).
"""

from __future__ import annotations

import asyncio
import time

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class GuardedProtocol(HttpToolsProtocol):
    """HttpToolsProtocol with the deadlines of the module docstring (class attributes,
    set per server by `guarded_protocol`)."""

    header_timeout_s = 10.0
    body_timeout_s = 30.0
    min_body_rate = 1024.0

    _guard: asyncio.TimerHandle | None = None
    _body_started = 0.0
    _body_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(self.header_timeout_s)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm(self.header_timeout_s)

    def on_headers_complete(self) -> None:
        super().on_headers_complete()
        self._body_started, self._body_bytes = time.monotonic(), 0
        self._arm(self.body_timeout_s)

    def on_body(self, body: bytes) -> None:
        super().on_body(body)
        self._body_bytes += len(body)
        elapsed = time.monotonic() - self._body_started
        if elapsed > self.body_timeout_s and self._body_bytes / elapsed < self.min_body_rate:
            self._expire()
            return
        self._arm(self.body_timeout_s)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._disarm()

    def _arm(self, delay: float) -> None:
        self._disarm()
        self._guard = self.loop.call_later(delay, self._expire)

    def _disarm(self) -> None:
        if self._guard is not None:
            self._guard.cancel()
            self._guard = None

    def _expire(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self.transport.close()


def guarded_protocol(
    header_timeout_s: float, body_timeout_s: float, min_body_rate: float
) -> type[GuardedProtocol]:
    """A `GuardedProtocol` class with these deadlines (uvicorn takes a class)."""
    return type(
        "ConfiguredGuardedProtocol",
        (GuardedProtocol,),
        {
            "header_timeout_s": header_timeout_s,
            "body_timeout_s": body_timeout_s,
            "min_body_rate": min_body_rate,
        },
    )
