"""Limits before work: authentication before the body, body and JSON-structure budgets
before decoding, list caps before validation, and the grader's expansion budget."""

from __future__ import annotations

import io
import logging
import re
import socket
import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from referee.service.http.app import create_app
from referee.service.http.body import json_containers
from referee.service.logs import JsonFormatter
from tests.conftest import start_server, stop_server
from tests.service.conftest import small_settings

KEY = "sekrit"
AUTH = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture(scope="module")
def keyed() -> Iterator[TestClient]:
    settings = small_settings(api_keys=KEY, max_json_containers=5_000)
    with TestClient(create_app(settings)) as client:
        yield client


@pytest.fixture(scope="module")
def keyed_server() -> Iterator[str]:
    proc, url = start_server({"REFEREE_API_KEYS": KEY, "REFEREE_CPU_WORKERS": "1"})
    yield url
    stop_server(proc)


def _raw(url: str, head: bytes, timeout: float = 5.0) -> tuple[bytes, float]:
    """Send only ``head`` (request line and headers, no body); the reply and its delay."""
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        start = time.monotonic()
        sock.sendall(head)
        reply = sock.recv(65536)
        return reply, time.monotonic() - start


def test_a_missing_key_is_refused_before_the_body_arrives(keyed_server: str) -> None:
    """The server answers 401 while the 60 MB it was promised never comes."""
    head = (
        b"POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 60000000\r\n\r\n"
    )
    reply, delay = _raw(keyed_server, head)
    assert reply.startswith(b"HTTP/1.1 401"), reply[:200]
    assert delay < 2.0


def test_a_declared_oversized_body_is_refused_before_it_arrives(keyed_server: str) -> None:
    head = (
        b"POST /v1/score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + KEY.encode() + b"\r\nContent-Length: 999999999999\r\n\r\n"
    )
    reply, delay = _raw(keyed_server, head)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert delay < 2.0


def test_too_many_json_containers_are_refused_before_decoding(keyed: TestClient) -> None:
    body = b'{"items": [' + b",".join([b"[]"] * 6_000) + b"]}"
    response = keyed.post(
        "/v1/score", content=body, headers={**AUTH, "Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert "JSON objects and arrays" in response.json()["error"]["message"]


def test_brackets_inside_strings_do_not_count() -> None:
    text = '{"code": "' + "{[" * 10_000 + '", "x": [1, {"a": "]"}]}'
    assert json_containers(text.encode()) == 3


def test_list_caps_apply_before_validation(keyed: TestClient) -> None:
    """201 items (the cap is 200) of a shape validation would reject: the cap answers."""
    items = [{"verifier": 7}] * 201
    response = keyed.post("/v1/score", json={"items": items}, headers=AUTH)
    assert response.status_code == 413
    assert "items: 201 entries" in response.json()["error"]["message"]
    query = ["q"] * 201
    response = keyed.post("/get_reward", json={"query": query}, headers=AUTH)
    assert response.status_code == 413
    assert "query: 201" in response.json()["error"]["message"]


def test_grader_templates_cannot_amplify_a_small_body(keyed: TestClient) -> None:
    big = "x" * 40_000
    template = "{{item.big}}" * 2_000  # 24 KB of template, 80 MB once rendered
    grader = {"type": "string_check", "name": "g", "input": template, "reference": "x",
              "operation": "eq"}  # fmt: skip
    body = {"grader": grader, "model_sample": "x", "item": {"big": big}}
    response = keyed.post("/v1/graders/run", json=body, headers=AUTH)
    assert response.status_code == 413
    assert "templates expand" in response.json()["error"]["message"]


def test_multi_graders_are_capped_in_leaves(keyed: TestClient) -> None:
    leaf = {"type": "string_check", "input": "a", "reference": "a", "operation": "eq"}
    graders = {f"g{i}": leaf for i in range(201)}
    grader = {"type": "multi", "graders": graders, "calculate_output": "g0"}
    response = keyed.post(
        "/v1/graders/run", json={"grader": grader, "model_sample": "a", "item": {}}, headers=AUTH
    )
    assert response.status_code == 413
    assert "leaf graders" in response.json()["error"]["message"]


@pytest.mark.parametrize("path", ["/docs", "/openapi.json"])
def test_docs_need_a_key_when_keys_are_set(keyed: TestClient, path: str) -> None:
    assert keyed.get(path).status_code == 401
    assert keyed.get(path, headers=AUTH).status_code == 200


def test_docs_load_nothing_from_another_host(keyed: TestClient) -> None:
    """Offline, /docs must still work: every script and stylesheet it loads is ours."""
    page = keyed.get("/docs", headers=AUTH).text
    assets = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert assets and all(a.startswith("/docs/assets/") for a in assets), assets
    for asset in assets:
        response = keyed.get(asset)  # static files of Swagger UI: served without a key
        assert response.status_code == 200 and len(response.content) > 100, asset
    assert "https://" not in page and "cdn" not in page
    assert keyed.get("/redoc").status_code == 401  # no such page (ReDoc needs a CDN)
    assert keyed.get("/redoc", headers=AUTH).status_code == 404


def test_docs_can_be_made_public() -> None:
    settings = small_settings(api_keys=KEY, docs_public=True)
    with TestClient(create_app(settings)) as client:
        assert client.get("/openapi.json").status_code == 200
        assert client.post("/v1/score", json={"items": []}).status_code == 401


def test_readiness_shows_its_details_only_to_a_key_holder(keyed: TestClient) -> None:
    anonymous = keyed.get("/readyz").json()
    assert anonymous["pools"] == {} and anonymous["problems"] == []
    assert "ready" in anonymous
    detailed = keyed.get("/readyz", headers=AUTH).json()
    assert "cpu" in detailed["pools"]


def test_a_key_in_the_path_serves_clients_that_cannot_send_headers(keyed: TestClient) -> None:
    """verl's sandbox client and OpenRLHF's remote reward take a bare URL."""
    item = {"items": [{"verifier": "string", "response": "a", "reference": "a"}]}
    assert keyed.post(f"/k/{KEY}/v1/score", json=item).status_code == 200
    assert keyed.post("/k/wrong/v1/score", json=item).status_code == 401
    reward = keyed.post(f"/k/{KEY}/get_reward", json={"query": ["x"], "labels": ["x"]})
    assert reward.status_code == 200
    assert keyed.get(f"/k/{KEY}/readyz").json()["pools"]  # authenticated: details shown


def test_a_path_key_never_reaches_logs_or_metrics(keyed: TestClient) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())  # the production format: path, status, id
    logger = logging.getLogger("referee.http")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        keyed.post(f"/k/{KEY}/v1/score", json={"items": []})  # a 422, logged as a warning
    finally:
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
    metrics = keyed.get("/metrics", headers=AUTH).text
    assert '"path": "/v1/score"' in stream.getvalue().replace('":"', '": "')
    assert KEY not in stream.getvalue()
    assert KEY not in metrics


def test_a_path_key_no_header_could_carry_is_a_wrong_key_not_a_crash(keyed: TestClient) -> None:
    item = {"items": [{"verifier": "string", "response": "a", "reference": "a"}]}
    response = keyed.post("/k/%E2%82%AC/v1/score", json=item)  # "€": not latin-1
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
