"""A real chat-completions server on 127.0.0.1 with scripted replies, for judge tests.

HTTP/1.1 over loopback (h11 on an asyncio loop in a background thread), so the judge's
client, pooling, timeouts and retries meet real sockets: replies can be delayed, can be
errors with headers, or can drop the connection without answering.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import h11


@dataclass
class Reply:
    """One scripted answer. ``body`` dict -> JSON; ``drop`` closes the socket instead."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    drop: bool = False


def completion(
    *contents: str,
    logprobs: list[dict[str, Any]] | None = None,
    usage: tuple[int, int] = (100, 20),
    **reply: Any,
) -> Reply:
    """A 200 chat completion with one choice per content (logprobs for every choice)."""
    choices = [
        {
            "index": i,
            "message": {"role": "assistant", "content": content},
            "logprobs": {"content": logprobs} if logprobs is not None else None,
            "finish_reason": "stop",
        }
        for i, content in enumerate(contents)
    ]
    body = {
        "id": "cmpl-test",
        "object": "chat.completion",
        "model": "judge",
        "choices": choices,
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]},
    }
    return Reply(body=body, **reply)


def char_logprobs(text: str, at: dict[int, list[tuple[str, float]]]) -> list[dict[str, Any]]:
    """``logprobs.content`` spelling ``text`` one character per token; ``at`` gives the
    top alternatives of the token at a character index (others get only themselves)."""
    return [
        {
            "token": ch,
            "logprob": 0.0,
            "top_logprobs": [{"token": t, "logprob": lp} for t, lp in at.get(i, [(ch, 0.0)])],
        }
        for i, ch in enumerate(text)
    ]


def user_text(request: dict[str, Any]) -> str:
    """The first user message of a recorded request (the rendered prompt)."""
    return str(next(m["content"] for m in request["messages"] if m["role"] == "user"))


def block(text: str, name: str) -> str:
    """The content between ``[name <tag>]`` and ``[/name <tag>]`` in a rendered prompt
    (the fences carry the call's random tag; the first block of that name)."""
    found = re.search(rf"\[{name} ([0-9a-f]{{12}})\]\n(.*?)\n\[/{name} \1\]", text, re.DOTALL)
    assert found is not None, f"no fenced {name} block in the prompt"
    return found.group(2)


Script = Callable[[dict[str, Any]], Reply]


def embeddings(*vectors: list[float], tokens: int = 12, **reply: Any) -> Reply:
    """A 200 ``/v1/embeddings`` answer, one entry per vector (listed in reverse: the
    client must order them by ``index``)."""
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    body = {
        "object": "list",
        "data": data[::-1],
        "model": "embed",
        "usage": {"prompt_tokens": tokens},
    }
    return Reply(body=body, **reply)


class JudgeEndpoint:
    """Serves ``POST /v1/chat/completions`` and ``/v1/embeddings`` alike: queued replies
    first, then ``script``; ``headers`` record each request's ``:path``.

    ``requests`` records every request body; ``max_in_flight`` the most requests being
    answered at once. Thread-safe to read from the test.
    """

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.script: Script = lambda _: Reply(status=500, body={"error": "no script"})
        self.max_in_flight = 0
        self._in_flight = 0
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def queue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def start(self) -> JudgeEndpoint:
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._listen(), self._loop)
        self.port = future.result(timeout=5)
        return self

    def stop(self) -> None:
        async def close() -> None:
            if self._server is not None:
                self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(close(), self._loop).result(timeout=5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)

    async def _listen(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    def _next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if self._queue:
                return self._queue.popleft()
        return self.script(body)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = h11.Connection(h11.SERVER)
        try:
            while True:
                request = await _read_request(conn, reader)
                if request is None:
                    return
                keep = await self._answer(conn, writer, *request)
                if not keep or conn.our_state is h11.MUST_CLOSE:
                    return
                conn.start_next_cycle()
        except (ConnectionError, h11.ProtocolError, asyncio.CancelledError):
            return
        finally:
            writer.close()

    async def _answer(
        self,
        conn: h11.Connection,
        writer: asyncio.StreamWriter,
        headers: dict[str, str],
        raw: bytes,
    ) -> bool:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
        try:
            reply = self._next_reply(json.loads(raw or b"{}"), headers)
            if reply.delay:
                await asyncio.sleep(reply.delay)
        finally:
            with self._lock:
                self._in_flight -= 1
        if reply.drop:
            writer.transport.abort()
            return False
        payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
        data = payload.encode()
        head = [("content-type", "application/json"), ("content-length", str(len(data)))]
        head += list(reply.headers.items())
        for event in (
            h11.Response(status_code=reply.status, headers=head),
            h11.Data(data=data),
            h11.EndOfMessage(),
        ):
            writer.write(conn.send(event) or b"")
        await writer.drain()
        return True


async def _read_request(
    conn: h11.Connection, reader: asyncio.StreamReader
) -> tuple[dict[str, str], bytes] | None:
    headers: dict[str, str] = {}
    body = b""
    while True:
        event = conn.next_event()
        if event is h11.NEED_DATA:
            data = await reader.read(65536)
            conn.receive_data(data)
            if not data and conn.their_state is h11.IDLE:
                return None
            continue
        if isinstance(event, h11.Request):
            headers = {k.decode().lower(): v.decode() for k, v in event.headers}
            headers[":path"] = event.target.decode()  # which route was called
        elif isinstance(event, h11.Data):
            body += bytes(event.data)
        elif isinstance(event, h11.EndOfMessage):
            return headers, body
        elif isinstance(event, h11.ConnectionClosed):
            return None
