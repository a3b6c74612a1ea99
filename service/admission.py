"""What a request must pass before the app spends anything on it (pure ASGI middleware).

In this order, each before the next costs memory or CPU:

1. **Authentication**: with API keys configured, a route that is not public needs a
   valid ``Authorization: Bearer`` header, checked before one byte of the body is read.
2. **Body size**: a declared ``Content-Length`` over the limit is refused at once; any
   other body is counted as it arrives and refused when it crosses the limit. Routes under
   a ``streamed`` prefix (job uploads) have their own limit and stream on.
3. **JSON structure**: a JSON body holding more containers (objects and arrays) than the
   budget is refused before it is decoded; decoding ``[[],[],...]`` would cost tens of
   bytes of Python objects per byte of body. Counting runs at C speed over the raw bytes,
   and only when a fast upper bound (every bracket, in strings too) exceeds the budget
   is the exact count (outside strings) taken.

Refusals are the one error shape (`service.errors.error_response`), 401 or 413, with
``Connection: close`` for 413 since the rest of the body is never read.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Sequence
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.errors import error_response

_STRINGS = re.compile(rb'"(?:[^"\\]++|\\.)*+"')


@dataclass(frozen=True)
class AdmissionRules:
    """``keys``: accepted bearer tokens (empty: no authentication); ``public``: paths
    open without one; ``max_body_bytes`` and ``streamed`` (path prefix -> its own
    limit); ``max_json_containers``: objects plus arrays in a JSON body."""

    keys: Sequence[bytes]
    public: frozenset[str]
    max_body_bytes: int
    streamed: dict[str, int]
    max_json_containers: int

    def authenticated(self, scope: Scope) -> bool:
        """Whether the request carries a valid key (always, when no keys are set)."""
        if not self.keys:
            return True
        token = _bearer(scope)
        matched = False
        for key in self.keys:  # every key compared, in constant time
            matched |= hmac.compare_digest(token, key)
        return matched


class Admission:
    """The middleware; see the module docstring."""

    def __init__(self, app: ASGIApp, rules: AdmissionRules) -> None:
        self.app = app
        self.rules = rules

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        authenticated = self.rules.authenticated(scope)
        # routes may show less to anonymous callers of public paths (/readyz's details)
        scope.setdefault("state", {})["authenticated"] = authenticated
        if not authenticated and scope.get("path", "") not in self.rules.public:
            message = "a valid API key is required: Authorization: Bearer <key>"
            await error_response(401, "unauthorized", message)(scope, receive, send)
            return
        declared = _content_length(scope)
        stream_limit = self._stream_limit(scope)
        if stream_limit is not None:
            if declared is not None and declared > stream_limit:
                await _too_large(scope, receive, send, f"exceeds the limit of {stream_limit} bytes")
            else:
                await self.app(scope, receive, send)
            return
        if declared is not None and declared > self.rules.max_body_bytes:
            limit = self.rules.max_body_bytes
            await _too_large(scope, receive, send, f"exceeds the limit of {limit} bytes")
            return
        body, ok = await self._buffer(receive)
        if not ok:
            limit = self.rules.max_body_bytes
            await _too_large(scope, receive, send, f"exceeds the limit of {limit} bytes")
            return
        if _is_json(scope) and not _within(body, self.rules.max_json_containers):
            budget = self.rules.max_json_containers
            message = f"holds more than {budget} JSON objects and arrays; use /v1/jobs"
            await _too_large(scope, receive, send, message)
            return
        await self.app(scope, _replay(body, receive), send)

    def _stream_limit(self, scope: Scope) -> int | None:
        path = scope.get("path", "")
        for prefix, limit in self.rules.streamed.items():
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
            if size > self.rules.max_body_bytes:
                return b"", False
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks), True


def json_containers(body: bytes) -> int:
    """Objects and arrays in a JSON text: brackets outside strings."""
    rough = body.count(b"{") + body.count(b"[")
    if rough == 0:
        return 0
    bare = _STRINGS.sub(b"", body)
    return bare.count(b"{") + bare.count(b"[")


def _within(body: bytes, budget: int) -> bool:
    if body.count(b"{") + body.count(b"[") <= budget:
        return True  # an upper bound, cheap: the exact count only when it is over
    return json_containers(body) <= budget


async def _too_large(scope: Scope, receive: Receive, send: Send, what: str) -> None:
    response = error_response(
        413, "payload_too_large", f"request body {what}", {"Connection": "close"}
    )
    await response(scope, receive, send)


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


def _bearer(scope: Scope) -> bytes:
    value = _header(scope, b"authorization") or b""
    scheme, _, token = value.partition(b" ")
    return token.strip() if scheme.lower() == b"bearer" else b""


def _content_length(scope: Scope) -> int | None:
    value = _header(scope, b"content-length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _is_json(scope: Scope) -> bool:
    kind = (_header(scope, b"content-type") or b"application/json").split(b";")[0].strip()
    return kind.endswith((b"/json", b"+json"))


def _replay(body: bytes, upstream: Receive) -> Receive:
    """The buffered body as one message, then the connection's own messages (so a client
    that goes away is still seen as gone)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await upstream()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive
