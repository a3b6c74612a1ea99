"""JSON from untrusted text, read so that one text means one value.

An object that names a key twice is refused (`RepeatedKey`): readers disagree on which
value counts (Python's ``json`` keeps the last, others the first, some refuse), so a
verdict on the value we read may not hold for the one a consumer of the response reads.
"""

from __future__ import annotations

import json
from typing import Any


class RepeatedKey(ValueError):
    """A JSON object names a key twice."""


def loads(text: str, *, constants: bool = True) -> Any:
    """``json.loads`` refusing repeated keys (`RepeatedKey`, a ValueError), and, with
    ``constants`` false, the NaN / Infinity extension standard JSON lacks (ValueError).
    Raises what ``json.loads`` raises (ValueError, RecursionError) on anything else."""
    refused = None if constants else _refuse_constant  # None: json's own reading
    return json.loads(text, object_pairs_hook=_unique, parse_constant=refused)


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise RepeatedKey(f"key {key!r} given twice")
        found[key] = value
    return found


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")
