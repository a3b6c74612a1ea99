"""The synchronous client: one pooled connection, retrying, jobs included."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import httpx

from referee.sandbox.sessions import SessionKind
from referee.service.client.sessions import Session
from referee.service.client.wire import (
    RetryPolicy,
    checked,
    chunks,
    decode_results,
    error_of,
    request_body,
    retryable,
    tag,
    untag,
)
from referee.verifiers.types import Item, Result


class Client:
    """One pooled HTTP connection to a referee server. Not thread-safe; one per thread."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        timeout_s: float = 600,
        retry: RetryPolicy | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=base_url, headers=headers, timeout=timeout_s)
        self._retry = retry or RetryPolicy()

    def score(self, items: Sequence[Item], deadline_s: float | None = None) -> list[Result]:
        """Results for ``items``, in order; raises `RefereeError` on a request-level error."""
        tagged = [tag(item, f"{index}") for index, item in enumerate(items)]
        data = self._send("POST", "/v1/score", json=request_body(tagged, deadline_s))
        results = decode_results(tagged, data)
        return [untag(result, item) for result, item in zip(results, items, strict=True)]

    def submit_job(self, path: Path) -> str:
        """Upload a JSONL file of items as a batch job (streamed); returns the job id."""
        with path.open("rb") as handle:
            response = self._http.post(
                "/v1/jobs",
                content=chunks(handle),
                headers={"Content-Type": "application/x-ndjson"},
            )
        return str(checked(response)["id"])

    def job(self, job_id: str) -> dict[str, Any]:
        """The job's state, counts by status and progress."""
        return self._send("GET", f"/v1/jobs/{job_id}")

    def jobs(self) -> list[dict[str, Any]]:
        """The key's unexpired jobs, newest first."""
        found: list[dict[str, Any]] = self._send("GET", "/v1/jobs")["jobs"]
        return found

    def job_summary(self, job_id: str) -> dict[str, Any]:
        """The job's summary so far: counts, reward histograms, groups, slowest and
        flagged items (``GET /v1/jobs/{id}/summary``)."""
        return self._send("GET", f"/v1/jobs/{job_id}/summary")

    def job_line(self, job_id: str, index: int) -> dict[str, Any]:
        """One line of the job: the item as uploaded and its result (null until scored)."""
        return self._send("GET", f"/v1/jobs/{job_id}/items/{index}")

    def job_results(self, job_id: str, sink: IO[bytes]) -> None:
        """Write the finished job's results (JSONL, input order) to ``sink``."""
        with self._http.stream("GET", f"/v1/jobs/{job_id}/results") as response:
            if response.status_code != 200:
                response.read()
                raise error_of(response)
            for chunk in response.iter_bytes():
                sink.write(chunk)

    def cancel_job(self, job_id: str) -> dict[str, Any]:
        return self._send("DELETE", f"/v1/jobs/{job_id}")

    def wait_job(self, job_id: str, poll_s: float = 0.5, timeout_s: float = 3600) -> dict[str, Any]:
        """Poll until the job is done, cancelled or failed; returns its final status."""
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.job(job_id)
            if status["state"] in ("done", "cancelled", "failed") or time.monotonic() > deadline:
                return status
            time.sleep(poll_s)

    def session(self, kind: SessionKind | str, **options: Any) -> Session:
        """A stateful session (``with client.session("python") as s: s.run("x = 1")``);
        ``options`` as ``POST /v1/sessions`` takes them (limits, ttl_s, files...)."""
        return Session(self._http, kind, **options)

    def _send(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        for attempt in range(self._retry.attempts):
            last = attempt == self._retry.attempts - 1
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.TransportError:
                if last:
                    raise
                time.sleep(self._retry.delay(attempt, None))
                continue
            if not retryable(response) or last:
                return checked(response)
            time.sleep(self._retry.delay(attempt, response.headers.get("Retry-After")))
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
