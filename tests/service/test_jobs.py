"""Batch jobs in embedded mode: spooled upload, ordered results, cancel, limits."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from fastapi.testclient import TestClient

from referee.service.http.app import create_app
from referee.service.jobs.status import JobState
from tests.service.conftest import small_settings

NDJSON = {"Content-Type": "application/x-ndjson"}


def lines(count: int, **extra: Any) -> bytes:
    rows = [
        orjson.dumps(
            {
                "id": str(i),
                "verifier": "string",
                "response": "a" if i % 2 else "b",
                "reference": "a",
                **extra,
            }
        )
        for i in range(count)
    ]
    return b"\n".join(rows) + b"\n"


def wait_done(client: TestClient, job_id: str, timeout_s: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        status: dict[str, Any] = client.get(f"/v1/jobs/{job_id}").json()
        if status["state"] in ("done", "cancelled") or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


def test_job_scores_every_line_in_order(client: TestClient) -> None:
    body = lines(1300) + b"not json\n\n" + orjson.dumps({"verifier": "string"}) + b"\n"
    accepted = client.post("/v1/jobs", content=body, headers=NDJSON)
    assert accepted.status_code == 202 and accepted.json()["total"] == 1302
    job_id = accepted.json()["id"]
    final = wait_done(client, job_id)
    assert final["state"] == "done" and final["done"] == 1302 and final["progress"] == 1.0
    assert final["counts"] == {"ok": 1300, "invalid": 2}
    results = [
        orjson.loads(x) for x in client.get(f"/v1/jobs/{job_id}/results").content.splitlines()
    ]
    assert [r["id"] for r in results[:1300]] == [str(i) for i in range(1300)]
    assert [r["reward"] for r in results[:4]] == [0.0, 1.0, 0.0, 1.0]
    assert [r["error"]["code"] for r in results[1300:]] == ["malformed_line"] * 2


def test_empty_upload_is_a_done_job(client: TestClient) -> None:
    job_id = client.post("/v1/jobs", content=b"\n\n", headers=NDJSON).json()["id"]
    assert wait_done(client, job_id)["state"] == "done"
    assert client.get(f"/v1/jobs/{job_id}/results").content == b""


def test_results_are_409_while_running_and_cancel_keeps_alignment(client: TestClient) -> None:
    body = lines(60, verifier="slow", params={"seconds": 0.05})
    job_id = client.post("/v1/jobs", content=body, headers=NDJSON).json()["id"]
    running = client.get(f"/v1/jobs/{job_id}/results")
    assert running.status_code == 409 and running.json()["error"]["code"] == "conflict"
    cancelled = client.delete(f"/v1/jobs/{job_id}")
    assert cancelled.status_code == 200 and cancelled.json()["state"] == "cancelled"
    results = client.get(f"/v1/jobs/{job_id}/results").content.splitlines()
    assert len(results) == 60
    assert orjson.loads(results[-1])["error"]["code"] == "cancelled"


@pytest.mark.parametrize("path", ["/v1/jobs/" + "0" * 32, "/v1/jobs/" + "0" * 32 + "/results"])
def test_unknown_job_is_404(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


@pytest.fixture(scope="module")
def tiny_uploads() -> Iterator[TestClient]:
    with TestClient(create_app(small_settings(cpu_workers=1, max_job_bytes=4096))) as c:
        yield c


def test_upload_over_the_job_limit_is_413(tiny_uploads: TestClient) -> None:
    declared = tiny_uploads.post("/v1/jobs", content=lines(200), headers=NDJSON)
    assert declared.status_code == 413

    def chunks() -> Iterator[bytes]:
        for _ in range(200):
            yield lines(1)

    streamed = tiny_uploads.post("/v1/jobs", content=chunks(), headers=NDJSON)
    assert streamed.status_code == 413
    assert "job upload exceeds" in streamed.json()["error"]["message"]


def test_a_crashing_job_runner_ends_the_job_with_errors(
    tiny_uploads: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = tiny_uploads.app.state.jobs  # type: ignore[attr-defined]

    async def broken(batch: list[object]) -> list[object]:
        raise OSError("disk full")

    monkeypatch.setattr(jobs, "_score", broken)
    job_id = tiny_uploads.post("/v1/jobs", content=lines(5), headers=NDJSON).json()["id"]
    final = wait_done(tiny_uploads, job_id)
    assert final["state"] == "done" and final["counts"] == {"error": 5}
    results = tiny_uploads.get(f"/v1/jobs/{job_id}/results").content.splitlines()
    assert [orjson.loads(r)["error"]["code"] for r in results] == ["job_failed"] * 5


def test_failed_uploads_and_expired_jobs_leave_no_files(tmp_path: Path) -> None:
    settings = small_settings(cpu_workers=1, max_job_bytes=4096, data_dir=tmp_path, job_ttl_s=60)
    with TestClient(create_app(settings)) as client:
        assert client.post("/v1/jobs", content=lines(200), headers=NDJSON).status_code == 413

        def chunks() -> Iterator[bytes]:
            for _ in range(200):
                yield lines(1)

        assert client.post("/v1/jobs", content=chunks(), headers=NDJSON).status_code == 413
        assert spooled(tmp_path) == []
        old = client.post("/v1/jobs", content=lines(3), headers=NDJSON).json()["id"]
        assert wait_done(client, old)["state"] == "done"
        jobs = client.app.state.jobs  # type: ignore[attr-defined]
        an_hour_ago = time.time() - 3600
        jobs._catalog.set_state(old, JobState.DONE, an_hour_ago)  # as if it finished then
        client.post("/v1/jobs", content=lines(1), headers=NDJSON)
        assert client.get(f"/v1/jobs/{old}").status_code == 404
        assert not any(p.name.startswith(old) for p in spooled(tmp_path))


def spooled(data_dir: Path) -> list[Path]:
    """Job files in the data directory (the catalog database aside)."""
    jobs = data_dir / "jobs"
    return [p for p in jobs.iterdir() if not p.name.startswith("jobs.sqlite3")]


ALPHA = {**NDJSON, "Authorization": "Bearer alpha"}
BETA = {**NDJSON, "Authorization": "Bearer beta"}


def keyed_app(tmp_path: Path, **settings: object) -> TestClient:
    return TestClient(
        create_app(
            small_settings(cpu_workers=1, api_keys="alpha,beta", data_dir=tmp_path, **settings)
        )
    )


def test_a_keys_jobs_are_invisible_to_other_keys(tmp_path: Path) -> None:
    with keyed_app(tmp_path) as client:
        job_id = client.post("/v1/jobs", content=lines(3), headers=ALPHA).json()["id"]
        assert wait_done_as(client, job_id, ALPHA)["state"] == "done"
        for method, path in [
            ("GET", f"/v1/jobs/{job_id}"),
            ("GET", f"/v1/jobs/{job_id}/results"),
            ("DELETE", f"/v1/jobs/{job_id}"),
        ]:
            response = client.request(method, path, headers=BETA)
            assert response.status_code == 404, (method, path)
        assert client.get(f"/v1/jobs/{job_id}/results", headers=ALPHA).status_code == 200


def wait_done_as(client: TestClient, job_id: str, headers: dict[str, str]) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        status: dict[str, Any] = client.get(f"/v1/jobs/{job_id}", headers=headers).json()
        if status["state"] in ("done", "cancelled") or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


def test_a_key_holds_at_most_its_job_count_and_delete_frees_a_place(tmp_path: Path) -> None:
    with keyed_app(tmp_path, max_jobs_per_key=2) as client:
        held = [client.post("/v1/jobs", content=lines(2), headers=ALPHA) for _ in range(2)]
        assert [r.status_code for r in held] == [202, 202]
        refused = client.post("/v1/jobs", content=lines(2), headers=ALPHA)
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "quota_exceeded"
        assert client.post("/v1/jobs", content=lines(2), headers=BETA).status_code == 202
        first = held[0].json()["id"]
        assert wait_done_as(client, first, ALPHA)["state"] == "done"
        assert client.delete(f"/v1/jobs/{first}", headers=ALPHA).status_code == 200
        assert client.get(f"/v1/jobs/{first}", headers=ALPHA).status_code == 404
        assert not any(p.name.startswith(first) for p in tmp_path.iterdir())
        assert client.post("/v1/jobs", content=lines(2), headers=ALPHA).status_code == 202


def test_a_keys_stored_bytes_are_capped_while_the_upload_streams(tmp_path: Path) -> None:
    with keyed_app(tmp_path, job_quota_bytes=8192) as client:
        first = client.post("/v1/jobs", content=lines(40), headers=ALPHA)
        assert first.status_code == 202
        wait_done_as(client, first.json()["id"], ALPHA)
        files = set(tmp_path.iterdir())

        def chunks() -> Iterator[bytes]:
            for _ in range(200):
                yield lines(1)

        refused = client.post("/v1/jobs", content=chunks(), headers=ALPHA)
        assert refused.status_code == 429
        assert "quota" in refused.json()["error"]["message"]
        assert set(tmp_path.iterdir()) == files  # the refused upload left nothing
        assert client.post("/v1/jobs", content=lines(40), headers=BETA).status_code == 202


def test_uploads_stop_when_the_spool_disk_is_nearly_full(tmp_path: Path) -> None:
    with keyed_app(tmp_path, job_disk_reserve_bytes=1 << 60) as client:
        refused = client.post("/v1/jobs", content=lines(3), headers=ALPHA)
        assert refused.status_code == 507
        assert refused.json()["error"]["code"] == "insufficient_storage"
        assert "storage is full" in refused.json()["error"]["message"]
