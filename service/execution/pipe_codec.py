"""Compact forms of items and results for the pipe between the gateway and its workers.

Pickling pydantic models costs about 10 us an object to load, which on a 2-core machine
was most of the gateway's time at large batches. Both sides here trust each other (the
gateway validated every item; a worker built every result), so objects cross as plain
dicts and are rebuilt without validation, exactly as pydantic's own unpickling does.
"""

from __future__ import annotations

from typing import Any, NamedTuple, TypeVar

from pydantic import BaseModel

from referee.verifiers.types import ErrorInfo, Item, Result, Status

M = TypeVar("M", bound=BaseModel)

_STATUS = {status.value: status for status in Status}
_ITEM_FIELDS = frozenset(Item.model_fields)
_RESULT_FIELDS = frozenset(Result.model_fields)
_ERROR_FIELDS = frozenset(ErrorInfo.model_fields)


class ItemsMessage(NamedTuple):
    """Parent -> worker: items to score, with their indices in the parent's task, and the
    indices among them whose CPU budget ran out in an earlier attempt (a ``None`` message
    instead tells the worker to exit)."""

    indices: list[int]
    items: list[dict[str, Any]]
    spent: list[int]
    item_timeout: float


class ResultsMessage(NamedTuple):
    """Worker -> parent: results for a prefix of what remains, with their indices."""

    indices: list[int]
    results: list[dict[str, Any]]


def rebuild(cls: type[M], fields: frozenset[str], values: dict[str, Any]) -> M:
    """An instance of ``cls`` from trusted ``values`` (every field present), unvalidated."""
    obj = cls.__new__(cls)
    object.__setattr__(obj, "__dict__", values)
    object.__setattr__(obj, "__pydantic_fields_set__", fields)
    object.__setattr__(obj, "__pydantic_extra__", None)
    object.__setattr__(obj, "__pydantic_private__", None)
    return obj


def pack_items(items: list[Item]) -> list[dict[str, Any]]:
    return [dict(item.__dict__) for item in items]


def unpack_items(packed: list[dict[str, Any]]) -> list[Item]:
    return [rebuild(Item, _ITEM_FIELDS, values) for values in packed]


def pack_results(results: list[Result]) -> list[dict[str, Any]]:
    packed = []
    for result in results:
        values = dict(result.__dict__)
        values["status"] = result.status.value
        if result.error is not None:
            values["error"] = (result.error.code, result.error.message, result.error.retryable)
        packed.append(values)
    return packed


def unpack_results(packed: list[dict[str, Any]]) -> list[Result]:
    results = []
    for values in packed:
        values["status"] = _STATUS[values["status"]]
        if values["error"] is not None:
            code, message, retryable = values["error"]
            error = {"code": code, "message": message, "retryable": retryable}
            values["error"] = rebuild(ErrorInfo, _ERROR_FIELDS, error)
        results.append(rebuild(Result, _RESULT_FIELDS, values))
    return results
