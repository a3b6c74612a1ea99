from __future__ import annotations

import tempfile
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from referee.service.http.app import create_app
from referee.service.settings import Settings


def small_settings(**overrides: object) -> Settings:
    """Tight limits so the limit paths are cheap to reach in tests."""
    base: dict[str, object] = {
        "cpu_workers": 2,
        "max_items_per_request": 200,
        "max_body_bytes": 2 * 1024 * 1024,
        "max_field_chars": 50_000,
        "item_timeout_s": 1.0,
        "default_deadline_s": 20.0,
        "data_dir": tempfile.mkdtemp(prefix="referee-test-"),  # jobs of one app only
    }
    return Settings.model_validate({**base, **overrides})


@pytest.fixture(scope="session")
def client() -> Iterator[TestClient]:
    """An in-process app with its real worker pool, shared by the session's tests."""
    with TestClient(create_app(small_settings())) as test_client:
        yield test_client


def wait_alive(client: TestClient, workers: int, timeout_s: float = 10.0) -> dict[str, object]:
    """``/readyz`` once ``workers`` cpu workers are alive: a worker killed by an earlier
    test is replaced after its request is answered, so the count can lag briefly."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        body: dict[str, object] = client.get("/readyz").json()
        pools = body["pools"]
        assert isinstance(pools, dict)
        if pools["cpu"]["alive"] == workers or time.monotonic() > deadline:
            return body
        time.sleep(0.05)
