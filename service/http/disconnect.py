"""Cancel a request's work when its client goes away (pure ASGI middleware).

Starlette does not stop an endpoint whose client disconnected: scoring would go on for
nobody, holding workers, sandboxes and judge budget. Here, once the request's body has
been read, the connection is watched; a disconnect cancels the endpoint's task, and the
cancellation reaches the pools (queued chunks dropped, running workers stopped).
"""

from __future__ import annotations

import asyncio
import contextlib

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class CancelOnDisconnect:
    """See the module docstring."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body_read = asyncio.Event()

        async def app_receive() -> Message:
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_read.set()
            return message

        work = asyncio.ensure_future(self.app(scope, app_receive, send))
        watcher = asyncio.ensure_future(_watch(body_read, receive, work))
        try:
            await work
        except asyncio.CancelledError:
            if not (watcher.done() and not watcher.cancelled() and watcher.result()):
                raise  # cancelled from outside (shutdown), not by a gone client
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher


async def _watch(body_read: asyncio.Event, receive: Receive, work: asyncio.Future[None]) -> bool:
    """True when the client went away and ``work`` was cancelled for it."""
    await body_read.wait()
    while not work.done():
        message = await receive()
        if message["type"] == "http.disconnect":
            work.cancel()
            return True
    return False
