"""Structured logs: one JSON object per line, carrying the request or job id in context.

`configure` is called by the CLI when a process starts (never at import). The request
middleware (`service.http.middleware.RequestObserver`) puts each request's id in `request_id`,
which every log line of that request carries.

Lines are formatted where they are logged and written by one background thread
(`logging.handlers.QueueListener`): a stderr nobody reads (a full pipe) never blocks the
event loop or a worker. The queue is bounded; past `QUEUE_LINES` lines waiting, new
ones are dropped and counted (`DroppingQueueHandler.dropped`).
"""

from __future__ import annotations

import atexit
import contextvars
import logging
import logging.handlers
import queue
from typing import IO, Any

import orjson

request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)

_RESERVED = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """``{"ts", "level", "logger", "msg", "request_id"?, ...extra}`` on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        rid = request_id.get()
        if rid is not None:
            entry["request_id"] = rid
        entry.update({k: v for k, v in vars(record).items() if k not in _RESERVED})
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


QUEUE_LINES = 10_000


class DroppingQueueHandler(logging.handlers.QueueHandler):
    """Formats in the logging thread (the request id is a context variable there) and
    hands the line to the writer thread; drops it when the queue is full."""

    def __init__(self, lines: queue.Queue[logging.LogRecord]) -> None:
        super().__init__(lines)
        self.dropped = 0

    def enqueue(self, record: logging.LogRecord) -> None:
        try:
            self.queue.put_nowait(record)
        except queue.Full:
            self.dropped += 1


class _Writer(logging.handlers.QueueListener):
    """The writer thread. Stopping waits a bounded time: a stream that never drains must
    not hold the process at exit."""

    STOP_WAIT_S = 5.0

    def stop(self) -> None:
        thread = self._thread
        if thread is None:
            return
        try:
            self.queue.put(self._sentinel, timeout=self.STOP_WAIT_S)  # type: ignore[attr-defined]
        except queue.Full:
            return  # the stream is stuck: leave the daemon thread behind
        thread.join(self.STOP_WAIT_S)
        self._thread = None


_listener: _Writer | None = None


@atexit.register
def _stop() -> None:
    """Stop the writer thread, once it has written what is queued."""
    global _listener
    if _listener is not None:
        _listener.stop()
        _listener = None


def configure(json_logs: bool, level: str, stream: IO[str] | None = None) -> None:
    """Route every logger (uvicorn's and Celery's included) through one handler that
    never blocks (see the module docstring); lines go to ``stream`` (default stderr)."""
    global _listener
    _stop()
    writer = logging.StreamHandler(stream)
    writer.setFormatter(logging.Formatter("%(message)s"))  # already formatted
    lines: queue.Queue[logging.LogRecord] = queue.Queue(QUEUE_LINES)
    handler = DroppingQueueHandler(lines)
    if json_logs:
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    _listener = _Writer(lines, writer)
    _listener.start()
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "celery"):
        logging.getLogger(name).handlers[:] = []
        logging.getLogger(name).propagate = True
