from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from tests.service.conftest import wait_alive


def item(response: str, reference: str | None = "a", **extra: Any) -> dict[str, Any]:
    return {"verifier": "string", "response": response, "reference": reference, **extra}


def post(client: TestClient, items: list[dict[str, Any]], **body: Any) -> dict[str, Any]:
    response = client.post("/v1/score", json={"items": items, **body})
    assert response.status_code == 200, response.text
    data: dict[str, Any] = response.json()
    return data


def test_results_come_back_in_input_order_with_ids_and_metadata(client: TestClient) -> None:
    items = [item("a" if i % 3 else "b", id=f"q{i}", metadata={"n": i}) for i in range(150)]
    results = post(client, items)["results"]
    assert [r["id"] for r in results] == [f"q{i}" for i in range(150)]
    assert [r["metadata"]["n"] for r in results] == list(range(150))
    assert [r["reward"] for r in results] == [0.0 if i % 3 == 0 else 1.0 for i in range(150)]
    assert {r["status"] for r in results} == {"ok"}
    assert {r["verifier"] for r in results} == {"string@1"}


def test_wrong_answer_is_ok_with_zero_not_an_error(client: TestClient) -> None:
    [result] = post(client, [item("b")])["results"]
    assert result == {**result, "status": "ok", "reward": 0.0, "error": None}


def test_one_bad_item_does_not_spoil_the_batch(client: TestClient) -> None:
    items = [
        item("a"),
        {"verifier": "no-such-verifier", "response": "a"},
        item("a", params={"op": "equals"}),
        item("a", reference=None),
        item("a", verifier="string@7"),
        item("a"),
    ]
    results = post(client, items)["results"]
    assert [r["status"] for r in results] == [
        "ok",
        "invalid",
        "invalid",
        "invalid",
        "invalid",
        "ok",
    ]
    assert results[1]["error"]["code"] == "unknown_verifier"
    assert "params.op" in results[2]["error"]["message"]
    assert results[3]["error"]["message"].startswith("reference")
    assert "string@1" in results[4]["error"]["message"]
    assert all(r["reward"] is None for r in results[1:5])


def test_pinned_version_is_reported(client: TestClient) -> None:
    [result] = post(client, [item("a", verifier="string@1")])["results"]
    assert result["verifier"] == "string@1"


def test_group_statistics(client: TestClient) -> None:
    items = [
        item("a", group="g1"),
        item("b", group="g1"),
        item("a", group="g1"),
        item("a", group="g1"),
        item("a", group="dead"),
        item("a", group="dead"),
        item("a", group="broken", params={"bogus": 1}),
        item("a"),
    ]
    groups = post(client, items)["groups"]
    assert set(groups) == {"g1", "dead", "broken"}
    g1 = groups["g1"]
    assert g1["size"] == 4 and g1["n_ok"] == 4
    assert g1["mean"] == 0.75
    assert abs(g1["std"] - (0.1875**0.5)) < 1e-12
    assert g1["pass_rate"] == 0.75
    assert g1["zero_variance"] is False
    assert groups["dead"]["zero_variance"] is True and groups["dead"]["std"] == 0.0
    assert groups["broken"] == {
        "size": 1,
        "n_ok": 0,
        "mean": None,
        "std": None,
        "pass_rate": None,
        "zero_variance": False,
    }


def test_pass_threshold_is_configurable(client: TestClient) -> None:
    items = [item("a", group="g"), item("b", group="g")]
    assert post(client, items, pass_threshold=0.0)["groups"]["g"]["pass_rate"] == 1.0


def test_details_can_be_dropped(client: TestClient) -> None:
    [with_details] = post(client, [item("a")])["results"]
    [without] = post(client, [item("a")], details=False)["results"]
    assert with_details["details"] and without["details"] == {}


def test_chat_messages_are_accepted(client: TestClient) -> None:
    convo = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "a"}]
    [result] = post(
        client, [{"verifier": "string", "prompt": convo, "response": convo, "reference": "a"}]
    )["results"]
    assert result["reward"] == 1.0


def test_verifiers_lists_params_schemas(client: TestClient) -> None:
    data = client.get("/v1/verifiers").json()
    by_ref = {v["ref"]: v for v in data["verifiers"]}
    string = by_ref["string@1"]
    assert string["pool"] == "cpu"
    assert "op" in string["params_schema"]["properties"]
    # the ref a result reports, build metadata included
    assert "reasoning_gym@1+reasoning-gym.0.1.25" in by_ref


def test_health_and_readiness(client: TestClient) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").status_code == 200
    body = wait_alive(client, 2)
    assert body["ready"] is True and body["executor"] == "embedded"
    assert body["pools"]["cpu"]["alive"] == 2  # type: ignore[index]


def test_metrics_count_items_by_verifier_and_status(client: TestClient) -> None:
    post(client, [item("a"), item("a", params={"bogus": 1})])
    text = client.get("/metrics").text
    assert 'referee_items_total{status="ok",verifier="string@1"}' in text
    assert 'referee_items_total{status="invalid",verifier="string@1"}' in text
    assert 'referee_http_requests_total{code="200",route="/v1/score"}' in text
    assert 'referee_pool_workers_alive{pool="cpu"} 2.0' in text


def test_metrics_count_hack_flags_by_verifier(client: TestClient) -> None:
    boxes = {"verifier": "math", "response": "\\boxed{1} or \\boxed{2}", "reference": "2"}
    response = client.post("/v1/score", json={"items": [boxes, boxes]})
    assert response.json()["results"][0]["details"]["flags"] == ["conflicting_answers"]
    text = client.get("/metrics").text
    assert 'referee_flags_total{flag="conflicting_answers",verifier="math@1"} 2.0' in text


def test_openapi_documents_every_route(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for route in ("/v1/score", "/v1/verifiers", "/healthz", "/readyz", "/metrics"):
        assert route in paths
