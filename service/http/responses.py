"""The JSON response class of every route: orjson bytes, no second validation pass."""

from __future__ import annotations

import json
from typing import Any

import orjson
from pydantic import BaseModel
from starlette.responses import Response


class JSONBytes(Response):
    """``application/json`` rendered by orjson.

    Clients may send what orjson will not write back: integers beyond 64 bits or lone
    surrogates in echoed fields (``id``, ``metadata``). Those rare bodies fall back to the
    standard library, which writes big integers exactly and escapes surrogates.
    """

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        try:
            return orjson.dumps(content, default=_plain, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:
            return json.dumps(content, ensure_ascii=True, allow_nan=False, default=_plain).encode()


def _plain(value: Any) -> Any:
    """What orjson cannot write itself: models nested in ``details``, anything else as text."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, set | frozenset):
        return sorted(value, key=str)
    return str(value)
