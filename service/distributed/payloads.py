"""What crosses the broker, typed: the two kinds of chunk a task carries, told apart by
``kind`` (a discriminated union, never by which keys happen to be present), and the
reply a worker pushes back for an interactive chunk."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from referee.service.execution.fair_queue import ANONYMOUS, Priority, Ticket
from referee.verifiers.types import Pool


class WireTicket(BaseModel):
    """A `Ticket` on the wire: whose work, at which priority."""

    tenant: str = ""
    priority: Priority = Priority.INTERACTIVE

    @classmethod
    def of(cls, ticket: Ticket) -> WireTicket:
        return cls(tenant=ticket.tenant, priority=ticket.priority)

    def ticket(self) -> Ticket:
        return Ticket(self.tenant, self.priority)


class _Chunk(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pool: Pool
    item_timeout: float
    ticket: WireTicket = Field(default_factory=lambda: WireTicket.of(ANONYMOUS))


class ReplyChunk(_Chunk):
    """Items of a ``/v1/score`` request; results go to the ``reply`` list the gateway
    waits on, tagged with ``chunk`` (its index in the request). ``deadline``: wall clock."""

    kind: Literal["reply"] = "reply"
    reply: str
    chunk: int
    items: list[dict[str, Any]]
    deadline: float


class JobChunk(_Chunk):
    """Lines ``[start, stop)`` of a batch job stored in Redis; results go to the job."""

    kind: Literal["job"] = "job"
    job: str
    start: int
    stop: int


Chunk = Annotated[ReplyChunk | JobChunk, Field(discriminator="kind")]
CHUNK: TypeAdapter[ReplyChunk | JobChunk] = TypeAdapter(Chunk)


class ChunkReply(BaseModel):
    """A worker's answer to a `ReplyChunk`: its index and one result per item (JSON)."""

    chunk: int
    results: list[dict[str, Any]]
