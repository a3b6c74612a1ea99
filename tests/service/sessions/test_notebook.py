"""``/run_jupyter`` on a short-lived session: how each way of ending is answered, and that
the session never outlives its request. (SandboxFusion's own client drives the happy
paths in tests/service/peers.)"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from referee.service.http.app import create_app
from tests.conftest import require
from tests.service.conftest import small_settings

from .test_routes import BWRAP


@pytest.fixture(scope="module")
def api() -> Iterator[TestClient]:
    require(BWRAP, "bubblewrap is not installed")
    with TestClient(create_app(small_settings(cpu_workers=1))) as client:
        yield client


@pytest.mark.parametrize(
    ("cells", "status", "driver", "message"),
    [
        (["x = 1", "x + 1"], "Success", "Finished", ""),
        (["import os", "os._exit(3)", "'never'"], "Failed", "Error", "ended"),
        (
            ["import signal", "signal.signal(signal.SIGALRM, signal.SIG_IGN)", "while True: pass"],
            "Failed",
            "TimeLimitExceeded",
            "",
        ),
    ],
    ids=["ran", "interpreter_died", "ignores_its_limit"],
)
def test_each_ending_is_answered(
    api: TestClient, cells: list[str], status: str, driver: str, message: str
) -> None:
    body = {"cells": cells, "total_timeout": 1}
    answer = api.post("/run_jupyter", json=body).json()
    assert (answer["status"], answer["driver"]["status"]) == (status, driver), answer
    assert message in answer["message"]
    assert api.get("/v1/sessions").json()["sessions"] == [], "the notebook's session stayed"


def test_a_cell_timeout_is_the_cells_error_and_the_rest_run(api: TestClient) -> None:
    body = {"cells": ["import time", "time.sleep(3)", "'next'"], "cell_timeout": 0.3}
    answer = api.post("/run_jupyter", json=body).json()
    assert answer["status"] == "Success"
    assert answer["cells"][1]["error"][0]["ename"] == "TimeoutError"
    assert answer["cells"][2]["display"] == [{"text/plain": "'next'"}]


def test_without_sessions_the_route_says_what_is_missing() -> None:
    settings = small_settings(cpu_workers=1)
    settings.engines.sandbox.backend = "process"
    with TestClient(create_app(settings)) as client:
        response = client.post("/run_jupyter", json={"cells": ["1"]})
        assert response.status_code == 503
        assert "bwrap" in response.json()["error"]["message"]
