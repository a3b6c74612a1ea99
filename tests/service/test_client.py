"""The clients against a real server (batching, alignment) and a scripted one (retries)."""

from __future__ import annotations

import asyncio
import random
import threading
import time

import httpx
import pytest

from referee.service.client import AsyncClient, BatchingClient, Client, RefereeError, RetryPolicy
from referee.verifiers import Item, Status
from tests.service.scripted_server import scripted_server

FAST = RetryPolicy(attempts=4, base_s=0.01, cap_s=0.05)


def requests_served(url: str) -> float:
    for line in httpx.get(f"{url}/metrics").text.splitlines():
        if line.startswith('referee_http_requests_total{code="200",route="/v1/score"}'):
            return float(line.split()[-1])
    return 0.0


def shuffled_item(index: int) -> tuple[Item, float]:
    """An item whose reward is known: the response is the reference reversed, or not."""
    right = index % 3 != 0
    reference = f"abc{index}"
    item = Item(
        id=f"s{index}",
        verifier="reverse",
        response=reference[::-1] if right else "nope",
        reference=reference,
    )
    return item, 1.0 if right else 0.0


def test_concurrent_single_calls_share_requests_and_never_misalign(live_server: str) -> None:
    rng = random.Random(7)
    cases = [shuffled_item(i) for i in range(300)]

    async def scenario() -> list[tuple[str | None, float | None]]:
        async with AsyncClient(live_server, linger_s=0.01) as client:

            async def one(item: Item) -> tuple[str | None, float | None]:
                await asyncio.sleep(rng.random() * 0.05)  # shuffle arrival and completion
                result = await client.score_one(item)
                return result.id, result.reward

            return await asyncio.gather(*(one(item) for item, _ in cases))

    before = requests_served(live_server)
    answers = asyncio.run(scenario())
    assert answers == [(item.id, expected) for item, expected in cases]
    sent = requests_served(live_server) - before
    assert 1 <= sent <= 60, sent  # 300 calls rode in far fewer requests


def test_items_without_ids_come_back_without_ids(live_server: str) -> None:
    async def scenario() -> list[Item | None]:
        async with AsyncClient(live_server) as client:
            items = [Item(verifier="string", response=str(i), reference="3") for i in range(6)]
            results = await asyncio.gather(*(client.score_one(item) for item in items))
            assert [r.reward for r in results] == [0, 0, 0, 1, 0, 0]
            return [r.id for r in results]  # type: ignore[misc]

    assert asyncio.run(scenario()) == [None] * 6


def test_threads_share_requests_through_the_batching_client(live_server: str) -> None:
    client = BatchingClient(live_server, linger_s=0.02)
    answers: dict[int, float | None] = {}

    def call(index: int) -> None:
        item = Item(id=str(index), verifier="string", response=str(index % 2), reference="1")
        answers[index] = client.score_one(item).reward

    try:
        threads = [threading.Thread(target=call, args=(i,)) for i in range(40)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        client.close()
    assert answers == {i: float(i % 2) for i in range(40)}


def test_per_call_deadline_turns_into_timeout(live_server: str) -> None:
    async def scenario() -> Status:
        async with AsyncClient(live_server) as client:
            slow = Item(verifier="slow", response="x", params={"seconds": 1.5})
            start = time.monotonic()
            result = await client.score_one(slow, deadline_s=0.3)
            assert time.monotonic() - start < 1.0
            return result.status

    assert asyncio.run(scenario()) == Status.TIMEOUT


@pytest.mark.parametrize("steps", [[503], [503, 502, 500], [429, 429], ["drop"]])
def test_retries_recover_from_5xx_and_429(steps: list[int | str]) -> None:
    script_steps: list[int | str] = [s for s in steps if s != "drop"]
    with scripted_server(script_steps) as (url, script):
        with Client(url, retry=FAST) as client:
            results = client.score([Item(id="a", verifier="x", response="y")])
        assert results[0].reward == 1.0
        assert script.requests == len(script_steps) + 1


def test_other_4xx_are_not_retried() -> None:
    with scripted_server([400, 400]) as (url, script):

        async def scenario() -> None:
            async with AsyncClient(url, retry=FAST) as client:
                await client.score([Item(id="a", verifier="x", response="y")])

        with pytest.raises(RefereeError) as raised:
            asyncio.run(scenario())
        assert raised.value.status == 400 and script.requests == 1


def test_retries_give_up_after_the_policy() -> None:
    with scripted_server([503] * 10) as (url, script):
        with Client(url, retry=FAST) as client, pytest.raises(RefereeError) as raised:
            client.score([Item(id="a", verifier="x", response="y")])
        assert raised.value.status == 503 and script.requests == FAST.attempts


def test_connection_errors_are_retried_then_raised() -> None:
    with scripted_server([]) as (url, _):
        pass  # the server is gone: nothing listens on the port now
    with Client(url, retry=FAST) as client, pytest.raises(httpx.TransportError):
        client.score([Item(id="a", verifier="x", response="y")])


def test_a_misaligned_answer_is_an_error_not_a_wrong_reward() -> None:
    with scripted_server(["swap"]) as (url, _):
        items = [Item(id="a", verifier="x", response="y"), Item(id="b", verifier="x", response="z")]
        with Client(url, retry=FAST) as client, pytest.raises(RefereeError) as raised:
            client.score(items)
        assert raised.value.code == "misaligned"


def test_sync_client_checks_alignment_for_items_without_ids() -> None:
    with scripted_server(["swap"]) as (url, _):
        items = [Item(verifier="x", response="y"), Item(verifier="x", response="z")]
        with Client(url, retry=FAST) as client, pytest.raises(RefereeError) as raised:
            client.score(items)
        assert raised.value.code == "misaligned"
    with scripted_server([]) as (url, _), Client(url, retry=FAST) as client:
        results = client.score([Item(verifier="x", response="y")])
        assert results[0].id is None and results[0].reward == 1.0
