"""What a verifier builds from a reference (validated, compiled), kept by the reference's
JSON text (and any text the build reads, such as the prompt): the items of a GRPO group
share one reference, and building it is often a large part of an item's cost.

Bounded both ways: at most ``size`` entries (the oldest out first), and nothing kept for
a reference whose JSON is over ``max_bytes`` (a client's huge reference is built each
time, never held). A build that raises is not kept. Thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

import orjson

T = TypeVar("T")


class ReferenceCache(Generic[T]):
    """Built values by the JSON of what they were built from."""

    def __init__(self, size: int, max_bytes: int) -> None:
        self.size = size
        self.max_bytes = max_bytes
        self._kept: dict[bytes, tuple[object, T]] = {}
        self._lock = threading.Lock()

    def get(self, raw: object, build: Callable[[], T], text: str = "") -> T:
        """The value built from ``raw`` (JSON-like) and ``text`` (a long string the build
        also reads, such as the prompt, kept out of the JSON), built with ``build`` once."""
        key = self._key(raw, text)
        if key is not None:
            found = self._kept.get(key)  # one dict read: atomic, no lock needed
            if found is not None:
                nulls, value = found
                if nulls is _NO_NULLS or nulls == raw:
                    return value
                return build()  # a NaN where the kept one had a null: see `_nulls`
        value = build()
        if key is not None:
            nulls = _nulls(key, raw)
            if nulls is not None:
                with self._lock:
                    if len(self._kept) >= self.size:
                        self._kept.pop(next(iter(self._kept)))
                    self._kept[key] = (nulls, value)
        return value

    def __len__(self) -> int:
        return len(self._kept)

    def _key(self, raw: object, text: str) -> bytes | None:
        # Keys in the order given: a group's references come from one source, in one
        # order; another order only costs a second build.
        try:
            key = orjson.dumps(raw)
        except TypeError:
            return None  # not JSON (an in-process caller's object): built each time
        if len(key) + len(text) > self.max_bytes:
            return None
        return key + b"\0" + text.encode("utf-8", "surrogatepass") if text else key


_NO_NULLS = object()


def _nulls(key: bytes, raw: object) -> object | None:
    """What a later reference with this key must equal, or None when ``raw`` must not be
    kept. orjson writes NaN and infinity as null, so two references can share a key: a
    reference whose JSON has a null is kept with its JSON read back (nulls as None), and
    one that does not read back equal (it holds NaN or infinity) is never kept. A lookup
    compares with that copy: a NaN where the kept one had None is built afresh."""
    if b"null" not in key:
        return _NO_NULLS
    copy = orjson.loads(key.split(b"\0", 1)[0])
    return copy if copy == raw else None
