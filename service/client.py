"""A small synchronous client for ``/v1/score`` (the trainer-facing client grows from here)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
        response = self._http.post("/v1/score", json=body)
        if response.status_code != 200:
            error = _error_of(response)
            raise RefereeError(response.status_code, error["code"], error["message"])
        return [Result.model_validate(r) for r in response.json()["results"]]

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _error_of(response: httpx.Response) -> dict[str, str]:
    try:
        error = response.json()["error"]
        return {"code": str(error["code"]), "message": str(error["message"])}
    except (ValueError, KeyError, TypeError):
        return {"code": "http_error", "message": response.text[:500]}
