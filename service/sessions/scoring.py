"""Scoring a session's end state: ``/v1/score`` items that name a session.

An item's ``params`` may carry, besides its verifier's own:

- ``session``: the id of one of the caller's sessions;
- ``session_response``: a path in that session; the file's text becomes the item's
  ``response`` (any verifier: code tests against the program the agent wrote, math
  against the answer it saved...);
- ``close_session``: delete the session once its state is taken (after every item of
  the request that names it).

Without ``session_response``, the session's whole directory is handed to a verifier that
takes files (``params.files``, base64; the ``state`` verifier's checker script). The
state is read here, when the request is scored, and the keys above are removed before
the verifier sees the item. A session that cannot be read makes its items ``invalid``
(no such session, busy, too large) or ``error`` (lost, unreachable), never a reward.
"""

from __future__ import annotations

import base64
import contextlib
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from referee.service.http.errors import ApiError, SessionGone
from referee.service.sessions.backend import SessionBackend
from referee.verifiers.base import echo
from referee.verifiers.registry import Registry, UnknownVerifier
from referee.verifiers.types import Item, Result, Status

KEYS = ("session", "session_response", "close_session")
_ID = re.compile(r"^[0-9a-f]{32}$")


@dataclass
class _Wanted:
    session: str
    path: str | None
    close: bool


@dataclass
class SessionStates:
    """Reads the sessions a request's items name, once each. ``budget``: the most bytes
    of session state one request hands to its verifiers (each item that names a session
    carries its state to a worker): past it, items are ``invalid``, asking for smaller
    requests."""

    sessions: SessionBackend
    registry: Registry
    tenant: str
    budget: int = 64 << 20
    _read: dict[tuple[str, str | None], dict[str, bytes] | ApiError] = field(default_factory=dict)
    _encoded: dict[tuple[str, str | None], dict[str, str]] = field(default_factory=dict)
    _closing: set[str] = field(default_factory=set)
    _spent: int = 0

    async def scored(
        self, items: list[Item], score: Callable[[list[Item]], Awaitable[list[Result]]]
    ) -> list[Result]:
        """``score``'s results for ``items``, with the sessions they name attached first
        (their results in place when they cannot be)."""
        if not any(isinstance(i.params, dict) and KEYS[0] in i.params for i in items):
            return await score(items)
        attached = await self.attach(items)
        results = iter(await score([a for a in attached if isinstance(a, Item)]))
        return [next(results) if isinstance(a, Item) else a for a in attached]

    async def attach(self, items: list[Item]) -> list[Item | Result]:
        """Each item as the verifier should see it, or its result when it cannot be
        scored. Sessions asked to close are closed after the last item that reads them."""
        attached = [await self._one(item) for item in items]
        for session_id in sorted(self._closing):
            # already gone: its items were answered from what was read
            with contextlib.suppress(ApiError):
                await self.sessions.delete(self.tenant, session_id)
        return attached

    async def _one(self, item: Item) -> Item | Result:
        params = item.params if isinstance(item.params, dict) else None
        if params is None or not any(key in params for key in KEYS):
            return item
        try:
            wanted = _wanted(params)
            self._require_taker(item, wanted)
        except ValueError as exc:
            return echo(Result.failed(Status.INVALID, "invalid_params", str(exc)), item)
        state = await self._state(wanted)
        if isinstance(state, ApiError):
            return echo(_failure(state), item)
        size = sum(map(len, state.values()))
        if self._spent + size > self.budget:
            message = (
                f"params.session: this request carries over {self.budget} bytes of session "
                "state to its verifiers; score fewer items per request"
            )
            return echo(Result.failed(Status.INVALID, "too_much_state", message), item)
        self._spent += size
        rest = {key: value for key, value in params.items() if key not in KEYS}
        if wanted.path is not None:
            text = state[wanted.path].decode("utf-8", errors="replace")
            return item.model_copy(update={"response": text, "params": rest})
        key = (wanted.session, wanted.path)
        if key not in self._encoded:  # one encoding, shared by the items that read it
            self._encoded[key] = {n: base64.b64encode(d).decode() for n, d in state.items()}
        return item.model_copy(update={"params": {**rest, "files": self._encoded[key]}})

    def _require_taker(self, item: Item, wanted: _Wanted) -> None:
        if wanted.path is not None:
            return
        try:
            verifier = self.registry.get(item.verifier)
        except UnknownVerifier:
            return  # the dispatcher answers an unknown verifier
        if "files" not in verifier.Params.model_fields:
            raise ValueError(
                f"params.session: verifier {verifier.name!r} takes no files; name the file "
                "to score with params.session_response, or judge the state with 'state'"
            )

    async def _state(self, wanted: _Wanted) -> dict[str, bytes] | ApiError:
        key = (wanted.session, wanted.path)
        if key not in self._read:
            try:
                if wanted.path is None:
                    self._read[key] = await self.sessions.snapshot(self.tenant, wanted.session)
                else:
                    data = await self.sessions.read_file(self.tenant, wanted.session, wanted.path)
                    self._read[key] = {wanted.path: data}
            except ApiError as exc:
                self._read[key] = exc
        if wanted.close:
            self._closing.add(wanted.session)
        return self._read[key]


def _wanted(params: dict[str, Any]) -> _Wanted:
    session, path, close = (params.get(key) for key in KEYS)
    if not isinstance(session, str) or not _ID.match(session):
        raise ValueError("params.session: a session id (32 hex digits) is required")
    if path is not None and not isinstance(path, str):
        raise ValueError("params.session_response: a path in the session, or nothing")
    if close is not None and not isinstance(close, bool):
        raise ValueError("params.close_session: true or false")
    return _Wanted(session, path, bool(close))


def _failure(exc: ApiError) -> Result:
    """An item's result when its session could not be read: the caller's mistake
    (``invalid``), or the session or its host failed (``error``: retryable only when the
    session itself is still there)."""
    message = f"params.session: {exc.message}"
    if isinstance(exc, SessionGone):
        return Result.failed(Status.ERROR, exc.code, message, retryable=False)
    if exc.status_code >= 500:  # the server's side: unavailable, not configured...
        return Result.failed(Status.ERROR, exc.code, message)
    return Result.failed(Status.INVALID, exc.code, message)
