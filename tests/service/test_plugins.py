"""Third-party verifiers load from the ``verifiers`` entry-point group.

The test plugin package (tests/plugins/referee_testplugin) is put on the path by the
tests' conftest, never installed; its static dist-info declares ``reverse`` (a class),
a factory of misbehaving verifiers, and one entry point that points at a missing module.
"""

from __future__ import annotations

from fastapi.testclient import TestClient

from referee.verifiers import Item, score_items
from referee.verifiers.builtin import default_registry


def test_plugin_class_and_factory_entry_points_are_registered() -> None:
    registry = default_registry()
    names = {v.name for v in registry.all()}
    assert {"reverse", "hang", "crash", "slow"} <= names
    assert registry.get("reverse@1").name == "reverse"


def test_broken_plugin_is_recorded_not_fatal() -> None:
    registry = default_registry()
    assert "broken" in registry.load_errors
    assert "ModuleNotFoundError" in registry.load_errors["broken"]
    assert registry.get("string").name == "string"


def test_plugin_verifier_scores_in_process() -> None:
    items = [
        Item(verifier="reverse", response="cba", reference="abc"),
        Item(verifier="reverse", response="abc", reference="abc"),
    ]
    assert [r.reward for r in score_items(items, default_registry())] == [1.0, 0.0]


def test_plugin_verifier_scores_over_http_in_worker_processes(client: TestClient) -> None:
    body = {"items": [{"verifier": "reverse", "response": "olleh", "reference": "hello"}]}
    [result] = client.post("/v1/score", json=body).json()["results"]
    assert result["status"] == "ok" and result["reward"] == 1.0
    assert result["verifier"] == "reverse@1"


def test_plugin_appears_in_listing_and_load_errors_are_reported(client: TestClient) -> None:
    data = client.get("/v1/verifiers").json()
    assert "reverse@1" in {v["ref"] for v in data["verifiers"]}
    assert "broken" in data["load_errors"]
    ready = client.get("/readyz").json()
    assert ready["ready"] is True
    assert any(
        p["component"].startswith("plugin:") and "broken" in p["component"] + p["message"]
        for p in ready["problems"]
    )
