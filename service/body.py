"""JSON request bodies: decoded with orjson, and list caps checked before validation.

`CappedRoute` is the route class of every JSON route: its requests decode with orjson
(bytes straight to objects, no intermediate text), and a route
that declares ``openapi_extra={"x-item-list": NAME}`` has the length of the body's
``NAME`` list checked against ``max_items_per_request`` before pydantic validates (and
allocates) a single item.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

import orjson
from fastapi import Request, Response
from fastapi.routing import APIRoute

from service.errors import PayloadTooLarge

ITEM_LIST = "x-item-list"


class JsonRequest(Request):
    """A request whose JSON body is parsed once: by orjson, and, for what orjson refuses
    (integers past 64 bits, NaN and Infinity, which validation then names precisely), by
    the standard library."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            body = await self.body()
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
