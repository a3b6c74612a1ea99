"""JSON request bodies: a structure budget, decoding by orjson, list caps before validation.

`CappedRoute` is the route class of every JSON route. A body holding more objects and
arrays than ``max_json_containers`` is refused before it is decoded: decoding
``[[],[],...]`` costs tens of bytes of Python objects per byte of body. Bodies decode
with orjson (bytes straight to objects, no intermediate text), and a route
that declares ``openapi_extra={"x-item-list": NAME}`` has the length of the body's
``NAME`` list checked against ``max_items_per_request`` before pydantic validates (and
allocates) a single item.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi import Request, Response
from fastapi.routing import APIRoute

from referee.service.http.errors import PayloadTooLarge

ITEM_LIST = "x-item-list"


_STRINGS = re.compile(rb'"(?:[^"\\]++|\\.)*+"')


def json_containers(body: bytes) -> int:
    """Objects and arrays in a JSON text: brackets outside strings."""
    rough = body.count(b"{") + body.count(b"[")
    if rough == 0:
        return 0
    bare = _STRINGS.sub(b"", body)
    return bare.count(b"{") + bare.count(b"[")


def within_containers(body: bytes, budget: int) -> bool:
    """Whether ``body`` holds at most ``budget`` objects and arrays: a cheap upper bound
    first (every bracket, in strings too), the exact count only when that bound is over.
    Both run at C speed over the raw bytes."""
    if body.count(b"{") + body.count(b"[") <= budget:
        return True
    return json_containers(body) <= budget


class JsonRequest(Request):
    """A request whose JSON body is parsed once: by orjson, and, for what orjson refuses
    (integers past 64 bits, NaN and Infinity, which validation then names precisely), by
    the standard library."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
            budget: int = self.app.state.settings.max_json_containers
            if not within_containers(body, budget):
                raise PayloadTooLarge(
                    f"request body holds more than {budget} JSON objects and arrays; "
                    "use /v1/jobs for large work"
                )
            try:
                self._json = orjson.loads(body)
            except orjson.JSONDecodeError:
                self._json = json.loads(body)
        return self._json


class CappedRoute(APIRoute):
    """See the module docstring."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        list_name = (self.openapi_extra or {}).get(ITEM_LIST)

        async def capped(request: Request) -> Response:
            request = JsonRequest(request.scope, request.receive)
            if list_name is not None:
                await _check_length(request, list_name)
            return await handler(request)

        return capped


async def _check_length(request: JsonRequest, name: str) -> None:
    limit: int = request.app.state.settings.max_items_per_request
    try:
        data = await request.json()
    except ValueError:  # malformed JSON or text: the handler reports it, as for any route
        return
    values = data.get(name) if isinstance(data, dict) else None
    if isinstance(values, list) and len(values) > limit:
        raise PayloadTooLarge(
            f"{name}: {len(values)} entries exceeds the limit of {limit} per request; "
            "use /v1/jobs for large files"
        )
