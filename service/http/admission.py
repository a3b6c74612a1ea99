"""Authentication before anything else (pure ASGI middleware).

With API keys configured, a route that is not public needs a valid ``Authorization:
Bearer`` header, checked before one byte of the body is read: an anonymous client cannot
make the gateway buffer, decode or validate anything. The body size limit comes next: a
declared ``Content-Length`` over it is refused at once, any other body is counted as the
app reads it (never buffered here) and refused when it crosses the limit. Routes under a
``streamed`` prefix (job uploads) have their own limit. Then `service.http.body` applies the
JSON structure budget before decoding.
"""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from dataclasses import dataclass

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from referee.service.http.errors import error_response


@dataclass(frozen=True)
class AdmissionRules:
    """``keys``: accepted bearer tokens (empty: no authentication); ``public``: paths
    open without one; ``max_body_bytes``, and ``streamed``: path prefix -> its own limit."""

    keys: Sequence[bytes]
    public: frozenset[str]
    max_body_bytes: int
    streamed: dict[str, int]
    public_prefixes: tuple[str, ...] = ()
    """Path prefixes open without a key (static files that hold nothing of ours)."""

    def is_public(self, scope: Scope) -> bool:
        path: str = scope.get("path", "")
        return path in self.public or path.startswith(self.public_prefixes)

    def body_limit(self, scope: Scope) -> int:
        """The body limit of the request's path."""
        path = scope.get("path", "")
        for prefix, limit in self.streamed.items():
            if path.startswith(prefix):
                return limit
        return self.max_body_bytes

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
        if not authenticated and not self.rules.is_public(scope):
            message = "a valid API key is required: Authorization: Bearer <key>"
            await error_response(401, "unauthorized", message)(scope, receive, send)
            return
        limit = self.rules.body_limit(scope)
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _too_large(scope, receive, send, limit)
            return
        await self.app(scope, _Counter(receive, limit, _too_large_message(scope, limit)), send)


class BodyTooLarge(HTTPException):
    """Raised into the app from ``receive`` when the body crosses its limit; an HTTP
    exception, so the app's error handler answers 413 in the one error shape."""

    def __init__(self, message: str) -> None:
        super().__init__(413, message, headers={"Connection": "close"})


class _Counter:
    """``receive`` that counts body bytes and raises `BodyTooLarge` past ``limit``."""

    def __init__(self, receive: Receive, limit: int, message: str) -> None:
        self._receive = receive
        self.limit = limit
        self.message = message
        self.size = 0

    async def __call__(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request":
            self.size += len(message.get("body", b""))
            if self.size > self.limit:
                raise BodyTooLarge(self.message)
        return message


def _too_large_message(scope: Scope, limit: int) -> str:
    if scope.get("path", "").startswith("/v1/jobs"):
        return f"job upload exceeds the limit of {limit} bytes"
    return f"request body exceeds the limit of {limit} bytes"


async def _too_large(scope: Scope, receive: Receive, send: Send, limit: int) -> None:
    message = _too_large_message(scope, limit)
    response = error_response(413, "payload_too_large", message, {"Connection": "close"})
    await response(scope, receive, send)


def _content_length(scope: Scope) -> int | None:
    value = _header(scope, b"content-length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value)
    return None


def _bearer(scope: Scope) -> bytes:
    value = _header(scope, b"authorization") or b""
    scheme, _, token = value.partition(b" ")
    return token.strip() if scheme.lower() == b"bearer" else b""
