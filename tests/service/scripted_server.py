"""A real HTTP server on loopback whose ``/v1/score`` answers follow a script.

Each entry of ``script`` is consumed by one request: an int is an error status (with an
error body, and ``Retry-After: 0`` for 429), ``"swap"`` answers with two results
swapped, and an exhausted script answers correctly (reward 1, ids echoed).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route


class Script:
    def __init__(self, steps: list[int | str]) -> None:
        self.steps = list(steps)
        self.requests = 0

    async def score(self, request: Request) -> JSONResponse:
        self.requests += 1
        body: dict[str, Any] = await request.json()
        step = self.steps.pop(0) if self.steps else None
        if isinstance(step, int):
            headers = {"Retry-After": "0"} if step == 429 else {}
            error = {"error": {"code": "scripted", "message": f"scripted {step}"}}
            return JSONResponse(error, status_code=step, headers=headers)
        results = [{"id": item.get("id"), "status": "ok", "reward": 1.0} for item in body["items"]]
        if step == "swap" and len(results) > 1:
            results[0], results[1] = results[1], results[0]
        return JSONResponse({"results": results, "groups": {}})


@contextmanager
def scripted_server(steps: list[int | str]) -> Iterator[tuple[str, Script]]:
    script = Script(steps)
    app = Starlette(routes=[Route("/v1/score", script.score, methods=["POST"])])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="error"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}", script
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()
