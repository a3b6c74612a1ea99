"""Fuzz every route from the OpenAPI schema against a live server: zero 5xx.

Both schemathesis modes run: positive (schema-conforming bodies, which reach the
verifiers with arbitrary params) and negative (bodies that violate the schema, which
must be refused with a 4xx, never a 500).
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.core.errors import UnsupportedSchema
from schemathesis.generation import GenerationMode


@schemathesis.serializer("application/x-ndjson")
def _ndjson(_: object, value: object) -> bytes:
    """Job uploads are JSONL: send generated values as they are, or one JSON line each."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    items = value if isinstance(value, list) else [value]
    return b"\n".join(json.dumps(v).encode() for v in items)


# Their bodies carry the sandboxed program's own output, tracebacks included (a notebook
# cell's error is an answer): there, only a traceback through our code counts.
PROGRAM_OUTPUT = frozenset(
    {"/run_code", "/run_jupyter", "/v1/run", "/v1/sessions/{session_id}/exec"}
)
OUR_FRAMES = re.compile(r'File "[^"]*/(?:referee|fastapi|starlette|uvicorn|pydantic)/')


def leaks_a_traceback(path: str, text: str) -> bool:
    if path in PROGRAM_OUTPUT:
        return OUR_FRAMES.search(text) is not None
    return "Traceback" in text


def fuzz(live_server: str, mode: GenerationMode) -> tuple[int, list[str]]:
    """Run every operation's strategy; return (cases sent, failures). In negative mode,
    schemathesis sometimes draws a mutation it cannot build (a ``not`` below the document
    root: its own limit, seen at random on some operation): that operation's run ends
    there, after the cases it sent; the test bounds how often."""
    schema = schemathesis.openapi.from_url(f"{live_server}/openapi.json")
    operations = [op.ok() for op in schema.get_all_operations()]  # type: ignore[union-attr]
    assert {op.path for op in operations} >= {"/v1/score", "/v1/verifiers", "/healthz"}
    sent, failures, unbuildable = 0, [], []
    # Requests to a session go to a live one (a made-up id is only ever a 404), except
    # DELETE, which would end it for the rest.
    session = httpx.post(f"{live_server}/v1/sessions", json={"kind": "python"}, timeout=30)
    session_id = session.json()["id"] if session.status_code == 201 else None
    for operation in operations:

        @settings(
            max_examples=80 if operation.path == "/v1/score" else 10,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        @given(operation.as_strategy(generation_mode=mode))
        def check(case: schemathesis.Case[Any]) -> None:
            nonlocal sent
            sent += 1
            parameters = case.path_parameters or {}
            if session_id and "session_id" in parameters and case.method != "DELETE":
                parameters["session_id"] = session_id
            response = case.call(base_url=live_server, timeout=30)
            text = response.content.decode(errors="replace")  # files come back as bytes
            if response.status_code >= 500 or leaks_a_traceback(case.path, text):
                failures.append(f"{case.method} {case.path}: {response.status_code} {text[:300]}")

        try:
            check()
        except Unsatisfiable:
            # Negative mode cannot violate a schema that accepts anything (GET /healthz).
            assert mode is GenerationMode.NEGATIVE
        except UnsupportedSchema:
            assert mode is GenerationMode.NEGATIVE
            unbuildable.append(f"{operation.method} {operation.path}")
    assert len(unbuildable) <= 3, f"schemathesis could not build negative cases for {unbuildable}"
    return sent, failures


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_fuzzing_every_route_gives_no_server_error(live_server: str, mode: GenerationMode) -> None:
    sent, failures = fuzz(live_server, mode)
    assert sent >= 50
    assert not failures, failures[:5]
    assert httpx.get(f"{live_server}/readyz").status_code == 200
