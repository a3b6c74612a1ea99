"""verl: a ``compute_score`` for ``custom_reward_function.path``.

verl calls ``compute_score(data_source, solution_str, ground_truth, extra_info)`` once per
sample, often from many threads; calls share HTTP requests through a process-wide
`BatchingClient`. Configuration comes from the environment, read on first call:

- ``REFEREE_URL`` (default ``http://127.0.0.1:8000``), ``REFEREE_API_KEY``;
- ``REFEREE_VERL_MAPPINGS``: JSON, data source -> `ItemMapping` (``"*"`` is the fallback).
  Defaults (`DEFAULT_MAPPINGS`): verl's code data sources (``codecontests``, ``apps``,
  ``codeforces``, ``taco``) use ``code`` with APPS's list-wrapped outputs accepted; its
  Search-R1 QA sources (``searchR1_nq``...) use ``qa`` (exact match of the last
  ``<answer>``, as verl scores them); every other data source uses ``math``. Code
  ground truth may be a JSON string, as verl stores it;
- ``REFEREE_VERL_EXTRA_KEYS``: comma-separated component names to return besides
  ``score`` and ``status``. Every item of a batch returns the same keys (verl collects each
  key into one list per batch and checks its length), so a component an item lacks is NaN;
- ``REFEREE_VERL_ON_FAILURE``: ``raise`` (default) or ``zero``. verl needs a number for
  every sample; by default an ``invalid``/``error``/``timeout`` result raises instead of
  silently becoming a reward of 0. ``zero`` opts into 0 with ``status`` in the dict.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from typing import Any

import orjson

from referee.service.adapters.mapping import ItemMapping
from referee.service.client import BatchingClient, RefereeError, loop_client
from referee.verifiers.types import Item, Result, Status

_lock = threading.Lock()
_client: BatchingClient | None = None


_CODE = ItemMapping(
    verifier="code", params={"accept_wrapped_output": True}, reference_column="answer"
)
_SEARCH_R1 = ("nq", "triviaqa", "popqa", "hotpotqa", "2wikimultihopqa", "musique", "bamboogle")
DEFAULT_MAPPINGS: dict[str, ItemMapping] = {
    "*": ItemMapping(verifier="math"),
    **{source: _CODE for source in ("codecontests", "apps", "codeforces", "taco")},
    **{f"searchR1_{name}": ItemMapping(verifier="qa") for name in _SEARCH_R1},
}


def mappings() -> dict[str, ItemMapping]:
    """Data source -> mapping, from ``REFEREE_VERL_MAPPINGS`` (parsed once per value)."""
    return _parse_mappings(os.environ.get("REFEREE_VERL_MAPPINGS", "{}"))


@functools.lru_cache(maxsize=8)
def _parse_mappings(raw: str) -> dict[str, ItemMapping]:
    given = {source: ItemMapping.model_validate(spec) for source, spec in orjson.loads(raw).items()}
    return {**DEFAULT_MAPPINGS, **given}


def to_item(data_source: str, solution_str: str, ground_truth: Any) -> Item:
    table = mappings()
    mapping = table.get(data_source, table["*"])
    row = {mapping.reference_column: ground_truth} if mapping.reference_column else {}
    return mapping.item(None, solution_str, row)


def to_score(result: Result) -> dict[str, Any]:
    """verl's return value: ``{"score", "status", *extra keys}`` (the same keys for every
    item), or an exception."""
    extra = {name: result.components.get(name, math.nan) for name in _extra_keys()}
    if result.status != Status.OK or result.reward is None:
        if os.environ.get("REFEREE_VERL_ON_FAILURE", "raise") != "zero":
            error = result.error
            raise RefereeError(
                200,
                error.code if error else result.status.value,
                error.message if error else "not scored",
            )
        return {"score": 0.0, "status": result.status.value, **extra}
    return {"score": result.reward, "status": "ok", **extra}


def _extra_keys() -> list[str]:
    raw = os.environ.get("REFEREE_VERL_EXTRA_KEYS", "")
    return [name.strip() for name in raw.split(",") if name.strip()]


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Any = None,
    **_: Any,
) -> dict[str, Any]:
    """One sample's score; thread-safe, batched with concurrent calls."""
    global _client
    with _lock:
        if _client is None:
            _client = BatchingClient(_url(), os.environ.get("REFEREE_API_KEY"))
    return to_score(_client.score_one(to_item(data_source, solution_str, ground_truth)))


async def compute_score_async(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Any = None,
    **_: Any,
) -> dict[str, Any]:
    """`compute_score` for verl's async reward loop; batched with concurrent awaits."""
    client = loop_client(_url(), os.environ.get("REFEREE_API_KEY"))
    result = await client.score_one(to_item(data_source, solution_str, ground_truth))
    return to_score(result)


def _url() -> str:
    return os.environ.get("REFEREE_URL", "http://127.0.0.1:8000")
