"""Task helpers that need no cluster."""

from __future__ import annotations

from typing import Any

from referee.service.distributed.tasks import run_or_fail
from referee.verifiers import Item, Pool, Status


class BrokenEngine:
    def run(self, *_: Any) -> list[Any]:
        raise OSError("no space left on device")


def test_a_chunk_whose_engine_breaks_is_answered_with_errors() -> None:
    items = [Item(id=str(i), verifier="string", response="a") for i in range(3)]
    results = run_or_fail(BrokenEngine(), Pool.CPU, items, 1.0, 0.0)  # type: ignore[arg-type]
    assert [r.id for r in results] == ["0", "1", "2"]
    assert {r.status for r in results} == {Status.ERROR}
    assert all(r.reward is None and "no space left" in r.error.message for r in results)  # type: ignore[union-attr]
