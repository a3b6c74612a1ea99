"""The JSON response class of every route: orjson bytes, no second validation pass."""

from __future__ import annotations

from typing import Any

import orjson
from starlette.responses import Response


class JSONBytes(Response):
    """``application/json`` rendered by orjson (fast, and strict about NaN: they become null)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, option=orjson.OPT_NON_STR_KEYS)
