"""The reference cache: one build per distinct reference, bounded, never a wrong reuse."""

from __future__ import annotations

import math
from typing import Any

import pytest

from referee.verifiers.reference_cache import ReferenceCache


def builder(log: list[Any], raw: Any) -> Any:
    def build() -> Any:
        log.append(raw)
        return {"built": repr(raw)}

    return build


def test_a_reference_is_built_once() -> None:
    cache: ReferenceCache[Any] = ReferenceCache(8, 1024)
    log: list[Any] = []
    first = cache.get({"a": 1, "b": [1, 2]}, builder(log, 1))
    assert cache.get({"a": 1, "b": [1, 2]}, builder(log, 2)) is first
    cache.get({"a": 1.0, "b": [1, 2]}, builder(log, 3))  # 1.0 is not 1
    cache.get({"a": True, "b": [1, 2]}, builder(log, 4))  # nor is True
    cache.get({"b": [1, 2], "a": 1}, builder(log, 5))  # another order: built again
    assert log == [1, 3, 4, 5]


def test_the_text_is_part_of_the_key() -> None:
    cache: ReferenceCache[Any] = ReferenceCache(8, 1024)
    log: list[Any] = []
    cache.get({"a": 1}, builder(log, "p1"), "prompt one")
    cache.get({"a": 1}, builder(log, "p2"), "prompt two")
    cache.get({"a": 1}, builder(log, "p1 again"), "prompt one")
    cache.get({"a": 1}, builder(log, "none"))
    assert log == ["p1", "p2", "none"]
    cache.get({"a": 1}, builder(log, "long"), "x" * 2000)
    cache.get({"a": 1}, builder(log, "long"), "x" * 2000)
    assert log[-2:] == ["long", "long"]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_never_reuse_the_build_of_a_null(bad: float) -> None:
    """orjson writes them as null: {"x": nan} must not get what {"x": None} built."""
    cache: ReferenceCache[Any] = ReferenceCache(8, 1024)
    log: list[Any] = []
    cache.get({"x": None}, builder(log, "null"))
    assert cache.get({"x": bad}, builder(log, "bad")) == {"built": "'bad'"}
    cache.get({"x": [bad]}, builder(log, "bad again"))
    assert log == ["null", "bad", "bad again"]
    assert len(cache) == 1
    other: ReferenceCache[Any] = ReferenceCache(8, 1024)  # the other order: NaN first
    other.get({"x": bad}, builder(log, "bad first"))
    assert other.get({"x": None}, builder(log, "null after")) == {"built": "'null after'"}


def test_a_failed_build_is_not_kept() -> None:
    cache: ReferenceCache[Any] = ReferenceCache(8, 1024)

    def fail() -> Any:
        raise ValueError("invalid")

    for _ in range(2):
        with pytest.raises(ValueError):
            cache.get({"x": 1}, fail)
    assert len(cache) == 0


def test_size_and_bytes_are_bounded() -> None:
    cache: ReferenceCache[Any] = ReferenceCache(4, 64)
    log: list[Any] = []
    for index in range(10):
        cache.get({"i": index}, builder(log, index))
    assert len(cache) == 4
    cache.get({"big": "x" * 100}, builder(log, "big"))
    cache.get({"big": "x" * 100}, builder(log, "big"))
    assert log[-2:] == ["big", "big"]
    cache.get({1: "not JSON"}, builder(log, "object"))
    assert len(cache) == 4
