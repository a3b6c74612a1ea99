"""The one exception hierarchy of the gateway and its single mapping to HTTP.

Routes raise `ApiError` subclasses; the handlers here turn them, FastAPI's validation
errors and anything unexpected into ``{"error": {"code", "message"}}``. Nothing else
builds error responses, and no traceback ever reaches a client.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from json import JSONDecodeError

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from redis.exceptions import RedisError
from starlette.exceptions import HTTPException as StarletteHTTPException

from referee.service.http.responses import JSONBytes

log = logging.getLogger(__name__)


class ApiError(Exception):
    """A request-level failure with an HTTP status and a stable code."""

    status_code = 400
    code = "bad_request"

    def __init__(self, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.headers = headers


class Unauthorized(ApiError):
    status_code, code = 401, "unauthorized"


class NotFound(ApiError):
    status_code, code = 404, "not_found"


class Conflict(ApiError):
    status_code, code = 409, "conflict"


class SessionBusyError(Conflict):
    code = "session_busy"


class SessionGone(ApiError):
    """The session ended (lost, expired or closed): its state is gone, never replaced."""

    status_code, code = 410, "session_lost"


class PayloadTooLarge(ApiError):
    status_code, code = 413, "payload_too_large"


class UnsupportedMediaType(ApiError):
    status_code, code = 415, "unsupported_media_type"


class Unprocessable(ApiError):
    status_code, code = 422, "invalid_request"


class Overloaded(ApiError):
    """The executor has more queued work than it accepts; retry after ``retry_after_s``."""

    status_code, code = 429, "overloaded"

    def __init__(self, message: str, retry_after_s: int = 1) -> None:
        super().__init__(message, headers={"Retry-After": str(retry_after_s)})


class TooManySessions(ApiError):
    """A key (or the server) holds all the sessions it may: close one first."""

    status_code, code = 429, "too_many_sessions"


class InsufficientStorage(ApiError):
    """A session's directory is full (its ``disk_mb``)."""

    status_code, code = 507, "insufficient_storage"


class Unavailable(ApiError):
    status_code, code = 503, "unavailable"


class NotConfiguredError(ApiError):
    """The service is not set up for this request (no working sandbox, say): 503, and
    the message names the setting or install step that fixes it."""

    status_code, code = 503, "not_configured"


def error_response(
    status_code: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONBytes:
    """The single place an error body is built."""
    body = {"error": {"code": code, "message": message}}
    return JSONBytes(body, status_code=status_code, headers=dict(headers or {}))


def describe_request_error(exc: RequestValidationError) -> tuple[int, str, str]:
    """Status, code and a message that names every offending field (``items.3.response``)."""
    problems = []
    for err in exc.errors():
        if err.get("type") == "json_invalid":
            return 400, "malformed_json", f"request body is not valid JSON: {err.get('msg')}"
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        message = err.get("msg")
        if loc == "body" and err.get("type") == "model_attributes_type":
            message = "expected a JSON object (send Content-Type: application/json)"
        problems.append(f"{loc}: {message}")
    return 422, "invalid_request", "; ".join(problems[:20])


def install_error_handlers(app: FastAPI) -> None:
    """Map every exception the app can raise to the one error shape."""

    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONBytes:
        return error_response(exc.status_code, exc.code, exc.message, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONBytes:
        return error_response(*describe_request_error(exc))

    @app.exception_handler(JSONDecodeError)
    async def _json(_: Request, exc: JSONDecodeError) -> JSONBytes:
        return error_response(400, "malformed_json", f"request body is not valid JSON: {exc}")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONBytes:
        code = {
            400: "malformed_body",
            404: "not_found",
            405: "method_not_allowed",
            413: "payload_too_large",
        }.get(exc.status_code, "http_error")
        message = str(exc.detail)
        if exc.status_code == 400:
            message = f"{message}: the body must be UTF-8 JSON"

        return error_response(exc.status_code, code, message, exc.headers)

    @app.exception_handler(RedisError)
    async def _broker(_: Request, exc: RedisError) -> JSONBytes:
        message = f"the broker (Redis) is unreachable: {type(exc).__name__}; retry later"
        return error_response(503, "broker_unavailable", message, {"Retry-After": "5"})

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONBytes:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, "internal", "internal error; the server log has the details")
