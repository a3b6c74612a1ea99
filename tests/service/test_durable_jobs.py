"""Embedded jobs outlive the server: a real ``referee serve`` killed with SIGKILL mid-job
resumes the job under the same id, with exactly one result per line, in order, the same
as an uninterrupted run; listing, content types and torn tails."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from fastapi.testclient import TestClient

from referee.service.http.app import create_app
from referee.service.jobs import local as local_jobs
from referee.service.jobs.catalog import JobCatalog
from referee.service.jobs.status import JobState
from referee.verifiers import Item, score_items
from referee.verifiers.builtin import default_registry
from tests.conftest import start_server, stop_server
from tests.service.conftest import small_settings

NDJSON = {"Content-Type": "application/x-ndjson"}


def items(n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"i{i}", "verifier": "string", "response": str(i % 7), "reference": str(i % 5)}
        for i in range(n)
    ]


def body(rows: list[dict[str, Any]]) -> bytes:
    lines = [orjson.dumps(row) for row in rows]
    lines.insert(3, b"{not json")  # a bad line keeps its place
    return b"\n".join(lines) + b"\n"


def comparable(raw: bytes) -> list[tuple[Any, ...]]:
    rows = [orjson.loads(line) for line in raw.splitlines()]
    return [(r["id"], r["status"], r["reward"], (r["error"] or {}).get("code")) for r in rows]


def expected(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    results = score_items([Item.model_validate(row) for row in rows], default_registry())
    out: list[tuple[Any, ...]] = [(r.id, r.status.value, r.reward, None) for r in results]
    out.insert(3, (None, "invalid", None, "malformed_line"))
    return out


def status(url: str, job_id: str) -> dict[str, Any]:
    data: dict[str, Any] = httpx.get(f"{url}/v1/jobs/{job_id}", timeout=10).json()
    return data


def kill(proc: subprocess.Popen[bytes]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def test_a_killed_server_resumes_its_job_with_every_line_once(tmp_path: Path) -> None:
    rows = items(40_000)
    env = {"REFEREE_DATA_DIR": str(tmp_path)}
    proc, url = start_server(env)
    try:
        answer = httpx.post(f"{url}/v1/jobs", content=body(rows), headers=NDJSON, timeout=60)
        job_id = answer.json()["id"]
        for _ in range(2):  # killed twice, at a point where some but not all lines are done
            deadline = time.monotonic() + 120
            while status(url, job_id)["done"] < 1000 and time.monotonic() < deadline:
                time.sleep(0.05)
            seen = status(url, job_id)
            assert 0 < seen["done"] < seen["total"], seen
            kill(proc)
            proc, url = start_server(env)
            resumed = status(url, job_id)
            assert resumed["done"] >= seen["done"] and resumed["state"] in ("running", "done")
        deadline = time.monotonic() + 300
        while (final := status(url, job_id))["state"] != "done" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert final["done"] == final["total"] == len(rows) + 1
        assert final["counts"] == {"ok": len(rows), "invalid": 1}
        results = httpx.get(f"{url}/v1/jobs/{job_id}/results", timeout=60).content
        listed = httpx.get(f"{url}/v1/jobs", timeout=10).json()["jobs"]
    finally:
        stop_server(proc)
    assert comparable(results) == expected(rows)
    assert [job["id"] for job in listed] == [job_id]


def test_listing_shows_only_the_callers_jobs(tmp_path: Path) -> None:
    settings = small_settings(cpu_workers=1, api_keys="alpha,beta", data_dir=tmp_path)
    alpha = {**NDJSON, "Authorization": "Bearer alpha"}
    beta = {**NDJSON, "Authorization": "Bearer beta"}
    with TestClient(create_app(settings)) as client:
        first = client.post("/v1/jobs", content=body(items(5)), headers=alpha).json()["id"]
        second = client.post("/v1/jobs", content=body(items(5)), headers=alpha).json()["id"]
        assert client.get("/v1/jobs", headers=beta).json() == {"jobs": []}
        listed = client.get("/v1/jobs", headers=alpha).json()["jobs"]
    assert [job["id"] for job in listed] == [second, first]  # newest first
    assert all(job["total"] == 6 and job["state"] in ("running", "done") for job in listed)


def test_a_form_or_multipart_upload_is_refused_not_misaligned(tmp_path: Path) -> None:
    with TestClient(create_app(small_settings(cpu_workers=1, data_dir=tmp_path))) as client:
        form = client.post(
            "/v1/jobs",
            content=body(items(3)),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        multipart = client.post("/v1/jobs", files={"file": ("items.jsonl", body(items(3)))})
        plain = client.post("/v1/jobs", content=body(items(3)))
    for refused in (form, multipart):
        assert refused.status_code == 415
        error = refused.json()["error"]
        assert error["code"] == "unsupported_media_type" and "--data-binary" in error["message"]
    assert plain.status_code == 202


def test_a_torn_tail_is_cut_when_the_job_resumes(tmp_path: Path) -> None:
    """Bytes past the committed progress (a batch half-written when the server died) are
    never served, and are rewritten when the job resumes."""
    rows = items(20)
    settings = small_settings(cpu_workers=1, data_dir=tmp_path)
    with TestClient(create_app(settings)) as client:
        job_id = client.post("/v1/jobs", content=body(rows), headers=NDJSON).json()["id"]
        while client.get(f"/v1/jobs/{job_id}").json()["state"] != "done":
            time.sleep(0.05)
        clean = client.get(f"/v1/jobs/{job_id}/results").content
    results = tmp_path / "jobs" / f"{job_id}.results.jsonl"
    with results.open("ab") as handle:
        handle.write(b'{"id": "torn", "sta')
    catalog = JobCatalog(tmp_path / "jobs" / "jobs.sqlite3")
    catalog.set_state(job_id, JobState.RUNNING, None)  # as if killed before it finished
    catalog.close()
    with TestClient(create_app(settings)) as client:
        assert client.get(f"/v1/jobs/{job_id}/results").status_code in (200, 409)
        while client.get(f"/v1/jobs/{job_id}").json()["state"] != "done":
            time.sleep(0.05)
        again = client.get(f"/v1/jobs/{job_id}/results").content
    assert again == clean
    assert results.read_bytes() == clean


def test_a_job_that_cannot_write_fails_visibly_and_resumes_when_it_can(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A full disk never makes a ``done`` job with missing lines: the job is ``failed``
    with the reason, and carries on from its last durable line once writes work again."""
    rows = items(1500)  # three batches
    real_append = local_jobs._append
    calls = {"n": 0}

    def full_disk_once(sink: Any, lines: bytes) -> None:
        calls["n"] += 1
        if calls["n"] == 2:  # the second batch finds the disk full
            raise OSError(errno.ENOSPC, "No space left on device")
        real_append(sink, lines)

    monkeypatch.setattr(local_jobs, "_append", full_disk_once)
    settings = small_settings(cpu_workers=1, data_dir=tmp_path)
    with TestClient(create_app(settings)) as client:
        client.app.state.jobs.retry_s = 1.0  # type: ignore[attr-defined]
        job_id = client.post("/v1/jobs", content=body(rows), headers=NDJSON).json()["id"]
        states = set()
        while (seen := client.get(f"/v1/jobs/{job_id}").json())["state"] != "done":
            states.add(seen["state"])
            if seen["state"] == "failed":
                assert "No space left on device" in seen["reason"]
            time.sleep(0.02)
        results = client.get(f"/v1/jobs/{job_id}/results").content
    assert "failed" in states
    assert comparable(results) == expected(rows)
