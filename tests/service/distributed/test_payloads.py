"""Chunks on the broker are typed: each kind parses back to itself, and a payload that is
neither (an unknown kind, a key of the other kind) is refused, not guessed at."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from referee.service.distributed.payloads import CHUNK, JobChunk, ReplyChunk, WireTicket
from referee.service.execution.fair_queue import Priority, Ticket
from referee.verifiers.types import Pool

TICKET = WireTicket.of(Ticket("key-digest", Priority.BATCH))


@pytest.mark.parametrize(
    "chunk",
    [
        ReplyChunk(
            reply="r", chunk=3, pool=Pool.CPU, items=[{"verifier": "string"}],
            item_timeout=1.5, deadline=1e9, ticket=TICKET,
        ),
        JobChunk(job="j", start=0, stop=512, pool=Pool.SANDBOX, item_timeout=10, ticket=TICKET),
    ],
)  # fmt: skip
def test_each_kind_round_trips(chunk: ReplyChunk | JobChunk) -> None:
    wire = chunk.model_dump(mode="json")
    assert CHUNK.validate_python(wire) == chunk
    assert CHUNK.validate_python(wire).ticket.ticket() == Ticket("key-digest", Priority.BATCH)


@pytest.mark.parametrize(
    "wire",
    [
        {"reply": "r", "chunk": 0, "pool": "cpu", "items": [], "item_timeout": 1, "deadline": 1},
        {"kind": "job", "job": "j", "start": 0, "stop": 1, "pool": "cpu", "item_timeout": 1,
         "items": []},
        {"kind": "other", "pool": "cpu", "item_timeout": 1},
    ],
)  # fmt: skip
def test_a_payload_of_no_kind_or_mixed_kinds_is_refused(wire: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        CHUNK.validate_python(wire)
