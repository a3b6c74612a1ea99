"""A small synchronous client for ``/v1/score`` (the trainer-facing client grows from here)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import httpx

from verifiers.types import Item, Result


class RefereeError(RuntimeError):
    """The server answered with an error body; ``code`` is its stable error code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message = status, code, message


class Client:
    """One pooled HTTP connection to a referee server. Not thread-safe; one per thread."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout_s: float = 600) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout_s)

    def score(self, items: Sequence[Item], deadline_s: float | None = None) -> list[Result]:
        """Results for ``items``, in order; raises `RefereeError` on a request-level error."""
        body: dict[str, Any] = {
            "items": [item.model_dump(mode="json", exclude_none=True) for item in items]
        }
        if deadline_s is not None:
            body["deadline_s"] = deadline_s
        data = self._ok(self._http.post("/v1/score", json=body))
        return [Result.model_validate(r) for r in data["results"]]

    def submit_job(self, path: Path) -> str:
        """Upload a JSONL file of items as a batch job (streamed); returns the job id."""
        with path.open("rb") as handle:
            response = self._http.post(
                "/v1/jobs",
                content=_chunks(handle),
                headers={"Content-Type": "application/x-ndjson"},
            )
        return str(self._ok(response)["id"])

    def job(self, job_id: str) -> dict[str, Any]:
        """The job's state, counts by status and progress."""
        return self._ok(self._http.get(f"/v1/jobs/{job_id}"))

    def job_results(self, job_id: str, sink: IO[bytes]) -> None:
        """Write the finished job's results (JSONL, input order) to ``sink``."""
        with self._http.stream("GET", f"/v1/jobs/{job_id}/results") as response:
            if response.status_code != 200:
                response.read()
                self._ok(response)
            for chunk in response.iter_bytes():
                sink.write(chunk)

    def cancel_job(self, job_id: str) -> dict[str, Any]:
        return self._ok(self._http.delete(f"/v1/jobs/{job_id}"))

    def wait_job(self, job_id: str, poll_s: float = 0.5, timeout_s: float = 3600) -> dict[str, Any]:
        """Poll until the job is done or cancelled; returns its final status."""
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.job(job_id)
            if status["state"] in ("done", "cancelled") or time.monotonic() > deadline:
                return status
            time.sleep(poll_s)

    def _ok(self, response: httpx.Response) -> dict[str, Any]:
        if response.status_code >= 300:
            error = _error_of(response)
            raise RefereeError(response.status_code, error["code"], error["message"])
        data: dict[str, Any] = response.json()
        return data

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _chunks(handle: IO[bytes], size: int = 1 << 20) -> Iterator[bytes]:
    while chunk := handle.read(size):
        yield chunk


def _error_of(response: httpx.Response) -> dict[str, str]:
    try:
        error = response.json()["error"]
        return {"code": str(error["code"]), "message": str(error["message"])}
    except (ValueError, KeyError, TypeError):
        return {"code": "http_error", "message": response.text[:500]}
