"""Clients for a referee server: sync and async, pooled, retrying, and batching.

- `Client` (sync) and `AsyncClient` send one ``/v1/score`` request per call, retrying
  connection errors, 429 and 5xx with exponential backoff and jitter (``Retry-After`` is
  honoured); other 4xx are raised at once as `RefereeError`.
- `AsyncClient.score_one` merges concurrent single-item calls into one request: the
  first call opens a short linger window, calls arriving inside it join the batch, and
  each caller gets its own result back by position, checked against the item's id.
- `BatchingClient` gives threads (verl, OpenRLHF workers) the same batching through an
  event loop of its own.
- ``client.session(kind)`` (both clients) opens a stateful sandbox session as a context
  manager (`Session`, `AsyncSession`): a persistent interpreter, shell or database.

Results are never misaligned: every item sent carries an id (a private one when the
caller gave none), and a response whose ids do not match the request is an error.
"""

from __future__ import annotations

from referee.service.client.batching import AsyncClient, BatchingClient, loop_client
from referee.service.client.sessions import AsyncSession, Session
from referee.service.client.sync import Client
from referee.service.client.wire import RefereeError, RetryPolicy

__all__ = [
    "AsyncClient",
    "AsyncSession",
    "BatchingClient",
    "Client",
    "RefereeError",
    "RetryPolicy",
    "Session",
    "loop_client",
]
