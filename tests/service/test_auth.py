from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from referee.service.http.app import create_app
from tests.service.conftest import small_settings

ITEM = {"items": [{"verifier": "string", "response": "a", "reference": "a"}]}


@pytest.fixture(scope="module")
def keyed() -> Iterator[TestClient]:
    settings = small_settings(api_keys="first-key, second-key", cpu_workers=1)
    with TestClient(create_app(settings)) as client:
        yield client


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": "Bearer first-ke"},
        {"Authorization": "Bearer first-key-and-more"},
        {"Authorization": "Basic Zmlyc3Qta2V5"},
        {"Authorization": "first-key"},
    ],
)
def test_protected_routes_refuse_missing_or_wrong_keys(
    keyed: TestClient, headers: dict[str, str]
) -> None:
    for method, path in [("post", "/v1/score"), ("get", "/v1/verifiers"), ("get", "/metrics")]:
        kwargs = {"json": ITEM} if method == "post" else {}
        response = getattr(keyed, method)(path, headers=headers, **kwargs)
        assert response.status_code == 401, (path, response.text)
        assert response.json()["error"]["code"] == "unauthorized"


@pytest.mark.parametrize("key", ["first-key", "second-key"])
def test_any_configured_key_is_accepted(keyed: TestClient, key: str) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    response = keyed.post("/v1/score", json=ITEM, headers=headers)
    assert response.status_code == 200
    assert response.json()["results"][0]["reward"] == 1.0
    assert keyed.get("/metrics", headers=headers).status_code == 200


def test_health_routes_stay_open(keyed: TestClient) -> None:
    assert keyed.get("/healthz").status_code == 200
    assert keyed.get("/readyz").status_code == 200


def test_the_page_is_open_and_its_data_is_not(keyed: TestClient) -> None:
    """``/ui`` holds no data: the page and its files are served without a key; every
    route it reads needs one, as for any client."""
    assert keyed.get("/ui").status_code == 200
    assert keyed.get("/ui/assets/app.js").status_code == 200
    for route in ("/v1/jobs", "/v1/traffic", f"/v1/jobs/{'0' * 32}/summary"):
        assert keyed.get(route).status_code == 401, route
    authorized = {"Authorization": "Bearer first-key"}
    assert keyed.get("/v1/traffic", headers=authorized).status_code == 200


def test_no_keys_means_open(client: TestClient) -> None:
    assert client.post("/v1/score", json=ITEM).status_code == 200


def test_embedded_rate_limit_is_per_key() -> None:
    settings = small_settings(
        api_keys="k1,k2", cpu_workers=1, rate_limit_items_per_s=1, rate_limit_burst=3
    )
    with TestClient(create_app(settings)) as client:
        items = {"items": [{"verifier": "string", "response": "a", "reference": "a"}] * 2}

        def post(key: str) -> int:
            headers = {"Authorization": f"Bearer {key}"}
            return client.post("/v1/score", json=items, headers=headers).status_code

        assert post("k1") == 200
        assert post("k1") == 429  # 2 + 2 > burst 3
        assert post("k2") == 200
        too_many = {"items": items["items"] * 2}
        response = client.post("/v1/score", json=too_many, headers={"Authorization": "Bearer k2"})
        # More than the burst can never pass, so it is 413, not a 429 to retry forever.
        assert response.status_code == 413 and "burst" in response.json()["error"]["message"]


def test_made_up_tokens_do_not_dodge_the_limit_without_keys() -> None:
    settings = small_settings(cpu_workers=1, rate_limit_items_per_s=1, rate_limit_burst=3)
    with TestClient(create_app(settings)) as client:
        items = {"items": [{"verifier": "string", "response": "a", "reference": "a"}] * 2}
        codes = [
            client.post(
                "/v1/score", json=items, headers={"Authorization": f"Bearer fake{i}"}
            ).status_code
            for i in range(3)
        ]
        assert codes[0] == 200 and 429 in codes[1:]
