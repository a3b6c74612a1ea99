"""Every request gets an id, echoed back and carried by its log line; metrics count it."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from referee.service.logs import JsonFormatter

ITEM = {"items": [{"verifier": "string", "response": "a", "reference": "a"}]}


@pytest.fixture
def http_log() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("referee.http")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield stream
    logger.removeHandler(handler)
    logger.setLevel(logging.NOTSET)


def test_client_request_id_is_echoed_and_logged(client: TestClient, http_log: io.StringIO) -> None:
    response = client.post("/v1/score", json=ITEM, headers={"X-Request-ID": "trainer-step-7"})
    assert response.headers["x-request-id"] == "trainer-step-7"
    [line] = [json.loads(x) for x in http_log.getvalue().splitlines()]
    assert line["request_id"] == "trainer-step-7" and line["status"] == 200
    assert line["path"] == "/v1/score" and line["level"] == "debug"


@pytest.mark.parametrize("header", [{}, {"X-Request-ID": "x" * 500}])
def test_missing_or_unreasonable_ids_are_replaced(
    client: TestClient, header: dict[str, str]
) -> None:
    rid = client.get("/healthz", headers=header).headers["x-request-id"]
    assert len(rid) == 32 and int(rid, 16) >= 0


def test_failures_log_as_warnings(client: TestClient, http_log: io.StringIO) -> None:
    client.post("/v1/score", json={"items": []})
    [line] = [json.loads(x) for x in http_log.getvalue().splitlines()]
    assert line["level"] == "warning" and line["status"] == 422


def test_a_refused_body_gets_an_id_a_log_line_and_a_count(
    client: TestClient, http_log: io.StringIO
) -> None:
    """A 413 is answered before any route runs; it is still a request like any other."""

    def refused() -> float:
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in client.get("/metrics").text.splitlines()
            if line.startswith("referee_http_requests_total") and 'code="413"' in line
        )

    before = refused()
    body = b"x" * (3 * 1024 * 1024)  # over the test settings' 2 MiB
    response = client.post(
        "/v1/score",
        content=body,
        headers={"X-Request-ID": "too-big", "Content-Type": "application/json"},
    )
    assert response.status_code == 413
    assert response.headers["x-request-id"] == "too-big"
    lines = [json.loads(x) for x in http_log.getvalue().splitlines()]
    assert any(line["request_id"] == "too-big" and line["status"] == 413 for line in lines)
    assert refused() == before + 1
