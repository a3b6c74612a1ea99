"""Logging never blocks the process: a stderr nobody reads costs lines, not a hang."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterator

import orjson
import pytest

from referee.service import logs


@pytest.fixture
def restored() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    logs._stop()
    root.handlers[:] = handlers
    root.setLevel(level)


def test_a_stalled_stream_does_not_block_logging(restored: None) -> None:
    read_end, write_end = os.pipe()
    stream = os.fdopen(write_end, "w")
    try:
        logs.configure(json_logs=True, level="info", stream=stream)
        start = time.monotonic()
        for index in range(50_000):  # a pipe holds 64 KiB: the writer blocks at once
            logging.getLogger("test").info("line %d with some padding to fill the pipe", index)
        assert time.monotonic() - start < 10.0
        [handler] = logging.getLogger().handlers
        assert isinstance(handler, logs.DroppingQueueHandler) and handler.dropped > 0
    finally:
        # let the writer finish what is queued: read the pipe until it is closed
        drain = threading.Thread(target=_drain, args=(read_end,))
        drain.start()
        logs._stop()
        stream.close()
        drain.join(timeout=30)
        os.close(read_end)


def _drain(fd: int) -> None:
    while os.read(fd, 1 << 20):
        pass


def test_lines_carry_the_request_id_of_the_logging_context(
    restored: None, tmp_path: object
) -> None:
    read_end, write_end = os.pipe()
    stream = os.fdopen(write_end, "w")
    logs.configure(json_logs=True, level="info", stream=stream)
    token = logs.request_id.set("req-7")
    try:
        logging.getLogger("test").info("hello")
    finally:
        logs.request_id.reset(token)
    logs._stop()  # flushes the queue
    stream.close()
    with os.fdopen(read_end) as reader:
        [line] = reader.read().splitlines()
    entry = orjson.loads(line)
    assert (entry["msg"], entry["request_id"]) == ("hello", "req-7")
