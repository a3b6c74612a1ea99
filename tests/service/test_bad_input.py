"""Bad input gets a clear 4xx or a per-item status naming the field; never a 500."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

HEADERS = {"Content-Type": "application/json"}


def error_of(response) -> dict[str, str]:  # type: ignore[no-untyped-def]
    body = response.json()
    assert set(body) == {"error"}, body
    assert "Traceback" not in response.text
    return body["error"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("body", "status", "code", "names"),
    [
        (b"{not json", 400, "malformed_json", "JSON"),
        (b"", 422, "invalid_request", "body"),
        (b"[]", 422, "invalid_request", "body"),
        (b'"items"', 422, "invalid_request", "body"),
        (b"{}", 422, "invalid_request", "items"),
        (b'{"items": []}', 422, "invalid_request", "items"),
        (b'{"items": {}}', 422, "invalid_request", "items"),
        (b'{"items": [{"response": "a"}]}', 422, "invalid_request", "items.0.verifier"),
        (b'{"items": [{"verifier": "string"}]}', 422, "invalid_request", "items.0.response"),
        (
            b'{"items": [{"verifier": "string", "response": 5}]}',
            422,
            "invalid_request",
            "items.0.response",
        ),
        (
            b'{"items": [{"verifier": "a b", "response": "x"}]}',
            422,
            "invalid_request",
            "items.0.verifier",
        ),
        (
            b'{"items": [{"verifier": "string", "response": "x", "params": []}]}',
            422,
            "invalid_request",
            "items.0.params",
        ),
        (
            b'{"items": [{"verifier": "string", "response": "x", "colour": 1}]}',
            422,
            "invalid_request",
            "items.0.colour",
        ),
        (
            b'{"items": [{"verifier": "string", "response": "x"}], "deadline_s": -1}',
            422,
            "invalid_request",
            "deadline_s",
        ),
        (
            b'{"items": [{"verifier": "string", "response": "x"}], "extra": 1}',
            422,
            "invalid_request",
            "extra",
        ),
        (
            b'{"items": [{"verifier": "string", "response": [{"content": "x"}]}]}',
            422,
            "invalid_request",
            "items.0.response",
        ),
    ],
)
def test_malformed_requests_get_4xx_naming_the_field(
    client: TestClient, body: bytes, status: int, code: str, names: str
) -> None:
    response = client.post("/v1/score", content=body, headers=HEADERS)
    assert response.status_code == status, response.text
    error = error_of(response)
    assert error["code"] == code
    assert names in error["message"]


def test_non_utf8_body_is_rejected_cleanly(client: TestClient) -> None:
    body = b'{"items": [{"verifier": "string", "response": "\xff\xfe"}]}'
    response = client.post("/v1/score", content=body, headers=HEADERS)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "malformed_body" and "UTF-8" in error["message"]


def test_too_many_items_is_413_naming_items(client: TestClient) -> None:
    items = [{"verifier": "string", "response": "a", "reference": "a"}] * 201
    response = client.post("/v1/score", json={"items": items})
    assert response.status_code == 413
    assert "items" in error_of(response)["message"]


def test_body_over_the_limit_is_413_before_parsing(client: TestClient) -> None:
    huge = "x" * (3 * 1024 * 1024)
    response = client.post("/v1/score", json={"items": [{"verifier": "string", "response": huge}]})
    assert response.status_code == 413
    assert error_of(response)["code"] == "payload_too_large"


def test_chunked_body_over_the_limit_is_413(client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"items": [{"verifier": "string", "response": "'
        for _ in range(40):
            yield b"y" * 100_000
        yield b'"}]}'

    response = client.post("/v1/score", content=chunks(), headers=HEADERS)
    assert response.status_code == 413
    error_of(response)


def test_chunked_body_under_the_limit_is_scored(client: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"items": [{"verifier": "string", "response": "a",'
        yield b' "reference": "a"}]}'

    response = client.post("/v1/score", content=chunks(), headers=HEADERS)
    assert response.status_code == 200, response.text
    assert response.json()["results"][0]["reward"] == 1.0


def test_oversized_field_is_per_item_invalid_and_batch_mates_score(client: TestClient) -> None:
    items = [
        {"verifier": "string", "response": "z" * 60_000, "reference": "a"},
        {"verifier": "string", "response": "a", "reference": "b" * 60_000},
        {"verifier": "string", "response": "a", "reference": "a"},
    ]
    results = client.post("/v1/score", json={"items": items}).json()["results"]
    assert [r["status"] for r in results] == ["invalid", "invalid", "ok"]
    assert "items[0].response" in results[0]["error"]["message"]
    assert "items[1].reference" in results[1]["error"]["message"]
    assert results[0]["reward"] is None


def test_ten_megabyte_string_gets_a_clear_answer(client: TestClient) -> None:
    huge = "x" * (10 * 1024 * 1024)
    response = client.post("/v1/score", json={"items": [{"verifier": "string", "response": huge}]})
    assert response.status_code == 413
    error_of(response)


def test_unknown_route_and_wrong_method_use_the_error_shape(client: TestClient) -> None:
    missing = client.get("/v1/nothing-here")
    assert missing.status_code == 404 and error_of(missing)["code"] == "not_found"
    wrong = client.get("/v1/score")
    assert wrong.status_code == 405 and error_of(wrong)["code"] == "method_not_allowed"


def test_deadline_and_item_timeout_are_clamped_not_rejected(client: TestClient) -> None:
    body = {
        "items": [{"verifier": "string", "response": "a", "reference": "a"}],
        "deadline_s": 1e9,
        "item_timeout_s": 1e9,
    }
    response = client.post("/v1/score", json=body)
    assert response.status_code == 200
    assert response.json()["results"][0]["status"] == "ok"


@pytest.mark.parametrize("number", [b"NaN", b"Infinity", b"1e400"])
def test_non_finite_request_numbers_are_422(client: TestClient, number: bytes) -> None:
    body = b'{"items": [{"verifier": "string", "response": "a"}], "pass_threshold": ' + number
    response = client.post("/v1/score", content=body + b"}", headers=HEADERS)
    assert response.status_code == 422
    assert "pass_threshold" in error_of(response)["message"]


@pytest.mark.parametrize("number", [b"NaN", b"1e400"])
def test_non_finite_params_are_per_item_invalid(client: TestClient, number: bytes) -> None:
    body = (
        b'{"items": [{"verifier": "string", "response": "a", "reference": "a",'
        b' "params": {"regex_timeout_s": ' + number + b"}}]}"
    )
    response = client.post("/v1/score", content=body, headers=HEADERS)
    assert response.status_code == 200
    [result] = response.json()["results"]
    assert result["status"] == "invalid"
    assert "params.regex_timeout_s" in result["error"]["message"]


def test_echoed_values_orjson_cannot_write_still_come_back(client: TestClient) -> None:
    body = (
        b'{"items": [{"verifier": "string", "response": "a", "reference": "a",'
        b' "id": "\\ud800", "metadata": {"n": 123456789012345678901234567890}}]}'
    )
    response = client.post("/v1/score", content=body, headers=HEADERS)
    assert response.status_code == 200, response.text
    [result] = response.json()["results"]
    assert result["metadata"] == {"n": 123456789012345678901234567890}
    assert result["reward"] == 1.0
