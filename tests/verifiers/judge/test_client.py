"""Client discipline against a real loopback server: retries, backoff, Retry-After,
timeouts inside the item deadline, dropped connections, the concurrency limit and
cancellation."""

from __future__ import annotations

import asyncio
import gc
import socket
import time
import warnings
from collections.abc import Callable

import pytest

from referee.verifiers import Item, Status
from referee.verifiers.judge import JudgeVerifier
from referee.verifiers.judge.client import retry_after
from referee.verifiers.judge.verifier import START_BATCH
from tests.verifiers.judge.conftest import fast_profile
from tests.verifiers.judge.endpoint import JudgeEndpoint, Reply, completion

MakeJudge = Callable[..., JudgeVerifier]
GOOD = completion('{"reason": "fine", "score": 10}')


def item(text: str = "Paris.", **params: object) -> Item:
    return Item(
        verifier="judge",
        prompt="Capital of France?",
        response=text,
        params={"mode": "implicit", **params},
    )


RECOVERABLE = [
    ("http 500", Reply(status=500, body={"error": "boom"})),
    ("http 502", Reply(status=502, body="<html>bad gateway</html>")),
    ("http 503 + Retry-After", Reply(status=503, body={}, headers={"retry-after": "0.05"})),
    ("http 429", Reply(status=429, body={"error": "slow down"})),
    ("dropped connection", Reply(drop=True)),
    ("200 that is not a completion", Reply(body={"unexpected": True})),
    ("slow past timeout_s", Reply(body={}, delay=0.6)),
]


@pytest.mark.parametrize(("case", "failure"), RECOVERABLE)
async def test_transient_failures_are_retried(
    endpoint: JudgeEndpoint, make_judge: MakeJudge, case: str, failure: Reply
) -> None:
    endpoint.queue(failure, failure)
    endpoint.script = lambda _: GOOD
    [result] = await make_judge(timeout_s=0.3).ascore([item()])
    assert result.status == Status.OK, (case, result.error)
    assert result.reward == 1.0
    assert len(endpoint.requests) == 3


PERSISTENT = [
    (Reply(status=500, body={}), "judge_http_5xx"),
    (Reply(status=429, body={}), "judge_rate_limited"),
    (Reply(drop=True), "judge_unreachable"),
    (Reply(body={}, delay=0.6), "judge_timeout"),
]


@pytest.mark.parametrize(("failure", "code"), PERSISTENT)
async def test_persistent_failures_are_errors_after_the_retries(
    endpoint: JudgeEndpoint, make_judge: MakeJudge, failure: Reply, code: str
) -> None:
    endpoint.script = lambda _: failure
    [result] = await make_judge(timeout_s=0.3, retries=2).ascore([item()])
    assert result.status == Status.ERROR
    assert result.reward is None
    assert result.error is not None and result.error.code == code
    assert len(endpoint.requests) == 3  # one try and two retries


@pytest.mark.parametrize("status", [400, 401, 404, 422])
async def test_other_4xx_are_not_retried(
    endpoint: JudgeEndpoint, make_judge: MakeJudge, status: int
) -> None:
    endpoint.script = lambda _: Reply(status=status, body={"error": "bad request"})
    [result] = await make_judge().ascore([item()])
    assert result.status == Status.ERROR
    assert result.error is not None and result.error.code == "judge_http_4xx"
    assert "bad request" in result.error.message
    assert result.error.retryable is False  # the same request would get the same answer
    assert len(endpoint.requests) == 1


async def test_an_unsendable_api_key_is_an_error_without_a_call(
    endpoint: JudgeEndpoint, make_judge: MakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key with a line break inside would split the request head: refused before any
    byte is sent, not retried, and named."""
    monkeypatch.setenv("BROKEN_KEY", "sk-a\r\nX-Injected: 1")
    endpoint.script = lambda _: GOOD
    [result] = await make_judge(api_key_env="BROKEN_KEY").ascore([item()])
    assert result.status == Status.ERROR
    assert result.error is not None and result.error.code == "judge_bad_request"
    assert endpoint.requests == []


async def test_retry_after_is_honoured(endpoint: JudgeEndpoint, make_judge: MakeJudge) -> None:
    endpoint.queue(Reply(status=429, body={}, headers={"Retry-After": "0.4"}))
    endpoint.script = lambda _: GOOD
    start = time.monotonic()
    [result] = await make_judge(backoff_s=0.0).ascore([item()])
    assert result.status == Status.OK, result.error
    assert time.monotonic() - start >= 0.4


async def test_retry_after_past_the_deadline_fails_at_once(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = lambda _: Reply(status=429, body={}, headers={"Retry-After": "30"})
    start = time.monotonic()
    [result] = await make_judge(deadline_s=2.0).ascore([item()])
    assert result.status == Status.ERROR
    assert result.error is not None and result.error.code == "judge_rate_limited"
    assert "no time left" in result.error.message
    assert time.monotonic() - start < 0.5


def test_retry_after_formats() -> None:
    assert retry_after("3") == 3.0
    assert retry_after("-1") == 0.0
    assert retry_after(None) is None and retry_after("soon") is None
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past


async def test_slow_judge_is_timeout_at_the_item_deadline(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = lambda _: Reply(body={}, delay=5.0)
    start = time.monotonic()
    items = [item(deadline_s=0.4), item("Lyon", deadline_s=0.8)]
    results = await make_judge(timeout_s=10.0).ascore(items)
    assert time.monotonic() - start < 1.5
    for result, budget_ms in zip(results, (400, 800), strict=True):
        assert result.status == Status.TIMEOUT and result.reward is None
        assert result.elapsed_ms == pytest.approx(budget_ms, abs=250)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_unreachable_endpoint_is_error_within_the_deadline() -> None:
    profile = fast_profile(f"http://127.0.0.1:{free_port()}/v1", retries=3)
    judge = JudgeVerifier(profiles={"default": profile}, item_deadline_s=3.0)
    start = time.monotonic()
    results = await judge.ascore([item(), item("Lyon")])
    assert time.monotonic() - start < 3.0
    await judge.aclose()
    for result in results:
        assert result.status == Status.ERROR and result.reward is None
        assert result.error is not None and result.error.code == "judge_unreachable"


async def test_concurrency_limit_is_respected(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = lambda _: completion('{"score": 3}', delay=0.05)
    items = [item(f"answer {i}") for i in range(12)]
    results = await make_judge(concurrency=3).ascore(items)
    assert [r.status for r in results] == [Status.OK] * 12
    assert endpoint.max_in_flight == 3
    assert len(endpoint.requests) == 12


async def test_no_item_lost_or_duplicated_under_injected_failures(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    failures = [Reply(status=500, body={}), Reply(drop=True), Reply(status=429, body={})]
    endpoint.queue(*(failures * 4))

    def by_quality(request: dict[str, object]) -> Reply:
        text = str(request["messages"][-1]["content"])  # type: ignore[index]
        score = int(text.split("answer ", 1)[1].split("\n", 1)[0]) % 10 + 1
        return completion(f'{{"score": {score}}}')

    endpoint.script = by_quality
    items = [item(f"answer {i}").model_copy(update={"id": str(i)}) for i in range(40)]
    results = await make_judge(concurrency=4, retries=4, breaker_failures=100).ascore(items)
    assert [r.id for r in results] == [str(i) for i in range(40)]
    assert all(r.status == Status.OK for r in results), [r.error for r in results]
    assert [r.details["raw_score"] for r in results] == [i % 10 + 1 for i in range(40)]


async def test_cancellation_releases_slots(endpoint: JudgeEndpoint, make_judge: MakeJudge) -> None:
    endpoint.script = lambda _: completion('{"score": 3}', delay=1.0)
    judge = make_judge(concurrency=1)
    task = asyncio.create_task(judge.ascore([item("one"), item("two")]))
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    endpoint.script = lambda _: completion('{"score": 3}')
    [result] = await judge.ascore([item("three")])  # the one slot is free again
    assert result.status == Status.OK, result.error


async def test_cancelled_while_starting_items_leaks_nothing(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    # More items than one start batch: cancelled between batches, the started items are
    # cancelled and awaited (their slots released) and the unstarted ones closed.
    endpoint.script = lambda _: completion('{"score": 3}', delay=1.0)
    judge = make_judge(concurrency=1)
    many = [item(f"answer {i}").model_copy(update={"id": str(i)}) for i in range(START_BATCH * 3)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        task = asyncio.create_task(judge.ascore(many))
        await asyncio.sleep(0)  # ascore starts the first batch and yields
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # An unawaited coroutine warns when it is freed. ascore's frame (holding them) is
        # kept by the task's CancelledError, and the task by the loop's handle that woke
        # this test until the next turn: drop both, then collect.
        del task
        await asyncio.sleep(0)
        gc.collect()
    assert not [w for w in caught if "never awaited" in str(w.message)]
    endpoint.script = lambda _: completion('{"score": 3}')
    [result] = await judge.ascore([item("last")])  # the one slot is free again
    assert result.status == Status.OK, result.error


async def test_items_beyond_one_start_batch_all_come_back_in_order(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = lambda _: GOOD
    many = [
        item(f"answer {i}").model_copy(update={"id": str(i)}) for i in range(START_BATCH * 2 + 5)
    ]
    results = await make_judge(concurrency=16).ascore(many)
    assert [r.id for r in results] == [i.id for i in many]
    assert all(r.status == Status.OK for r in results), [r.error for r in results]


async def test_api_key_comes_from_the_named_variable(
    endpoint: JudgeEndpoint, make_judge: MakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_JUDGE_KEY", "sk-test")
    endpoint.script = lambda _: GOOD
    await make_judge(api_key_env="TEST_JUDGE_KEY").ascore([item()])
    assert endpoint.headers[0]["authorization"] == "Bearer sk-test"


async def test_circuit_opens_on_an_outage_and_closes_after_a_success(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.script = lambda _: Reply(status=503, body={})
    judge = make_judge(concurrency=1, retries=1, breaker_failures=4, breaker_cooldown_s=0.3)
    start = time.monotonic()
    results = await judge.ascore([item(f"answer {i}") for i in range(20)])
    assert time.monotonic() - start < 1.0
    assert {r.status for r in results} == {Status.ERROR}
    assert {r.error.code for r in results if r.error} == {"judge_http_5xx"}
    assert len(endpoint.requests) == 4  # the rest failed fast, without a call
    assert sum("circuit open" in (r.error.message if r.error else "") for r in results) >= 18
    await asyncio.sleep(0.35)
    endpoint.script = lambda _: GOOD
    [result] = await judge.ascore([item("after the outage")])
    assert result.status == Status.OK, result.error


async def test_rate_limits_do_not_open_the_circuit(
    endpoint: JudgeEndpoint, make_judge: MakeJudge
) -> None:
    endpoint.queue(*[Reply(status=429, body={}, headers={"Retry-After": "0"})] * 6)
    endpoint.script = lambda _: GOOD
    [result] = await make_judge(retries=6, breaker_failures=2).ascore([item()])
    assert result.status == Status.OK, result.error
