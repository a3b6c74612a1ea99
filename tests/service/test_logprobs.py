"""``POST /v1/logprobs`` over HTTP (the in-process app with a tiny causal LM built here):
lists and the compact form, statuses per item, and 4xx that name the field."""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterator

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
from fastapi.testclient import TestClient

from referee.gpu_rm.settings import ModelSpec, RMSettings
from referee.service.http.app import create_app
from referee.verifiers.engines import EngineSettings
from tests.gpu_rm.conftest import build_lm
from tests.service.conftest import small_settings


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    path = build_lm(tmp_path_factory.mktemp("lm") / "llama", "llama")
    spec = ModelSpec(path=str(path), head="lm", device="cpu", dtype="float32")
    engines = EngineSettings.from_env().model_copy(update={"rm": RMSettings(models={"tiny": spec})})
    with TestClient(create_app(small_settings(engines=engines, item_timeout_s=30.0))) as c:
        yield c


def test_lists_compact_and_per_item_statuses(client: TestClient) -> None:
    items = [
        {"id": "a", "prompt": "Question: add two and three.", "continuation": " The answer is 5"},
        {"id": "b", "prompt": "Question:", "continuation": ""},
        {"id": "c", "prompt_ids": [3, 4, 5], "continuation_ids": [6, 7]},
    ]
    body = client.post("/v1/logprobs", json={"items": items, "top_k": 2}).json()
    first, empty, ids = body["results"]
    assert [r["status"] for r in body["results"]] == ["ok", "invalid", "ok"]
    assert empty["error"]["code"] == "empty_response" and empty["id"] == "b"
    assert len(first["logprobs"]) == len(first["tokens"]) == len(first["entropies"])
    assert first["mean_logprob"] == pytest.approx(sum(first["logprobs"]) / len(first["tokens"]))
    assert all(len(row) == 2 for row in first["top_k"])
    assert ids["tokens"] == [6, 7] and all(lp <= 0 for lp in ids["logprobs"])
    compact = client.post("/v1/logprobs", json={"items": items[:1], "format": "compact"}).json()
    packed = base64.b64decode(compact["results"][0]["logprobs"])
    values = struct.unpack(f"<{len(packed) // 4}f", packed)
    assert values == pytest.approx(first["logprobs"], abs=1e-6)
    tokens = base64.b64decode(compact["results"][0]["tokens"])
    assert list(struct.unpack(f"<{len(tokens) // 4}i", tokens)) == first["tokens"]


@pytest.mark.parametrize(("body", "field"), [
    ({"items": []}, "items"),
    ({"items": [{"continuation": "x"}], "top_k": 21}, "top_k"),
    ({"items": [{"continuation": "x"}], "format": "arrays"}, "format"),
    ({"items": [{"continuation": "x", "extra": 1}]}, "extra"),
])  # fmt: skip
def test_bad_requests_name_the_field(
    client: TestClient, body: dict[str, object], field: str
) -> None:
    response = client.post("/v1/logprobs", json=body)
    assert response.status_code == 422
    assert field in response.json()["error"]["message"]


def test_an_unknown_model_is_a_per_item_invalid(client: TestClient) -> None:
    body = {"items": [{"prompt": "a", "continuation": "b"}], "model": "nope"}
    (result,) = client.post("/v1/logprobs", json=body).json()["results"]
    assert (result["status"], result["error"]["code"]) == ("invalid", "unknown_model")
