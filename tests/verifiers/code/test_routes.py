"""``POST /v1/run``, SandboxFusion's ``POST /run_code`` and code items on ``/v1/score``,
through the real app (lifespan, worker pools, real sandbox)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from referee.service.http.app import create_app
from tests.service.conftest import small_settings

CPP = '#include <cstdio>\nint main(){int a,b;scanf("%d %d",&a,&b);printf("%d\\n",a+b);}'


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    settings = small_settings(sandbox_workers=2, item_timeout_s=5.0)
    with TestClient(create_app(settings)) as test_client:
        yield test_client


def test_v1_run_compiles_once_and_compares(client: TestClient) -> None:
    cases = [{"stdin": "1 2", "expected": "3"}, {"stdin": "2 2", "expected": "5"}, {"stdin": "0 0"}]
    body = client.post("/v1/run", json={"language": "cpp", "source": CPP, "cases": cases})
    assert body.status_code == 200, body.text
    out = body.json()
    assert out["sandbox_status"] == "ok" and out["compile"]["status"] == "ok"
    assert [c["stdout"] for c in out["cases"]] == ["3\n", "4\n", "0\n"]
    assert [c["passed"] for c in out["cases"]] == [True, False, None]


# (request, expected status, expected run status, return code)
FUSION: list[tuple[dict[str, Any], str, str | None, int | None]] = [
    ({"code": "print(input())", "language": "python", "stdin": "hi"}, "Success", "Finished", 0),
    ({"code": "raise SystemExit(3)", "language": "python"}, "Failed", "Finished", 3),
    (
        {"code": "while True: pass", "language": "python", "run_timeout": 0.5},
        "Failed",
        "TimeLimitExceeded",
        None,
    ),
    ({"code": "int main( {", "language": "cpp"}, "Failed", None, None),
    ({"code": CPP, "language": "cpp", "stdin": "2 3"}, "Success", "Finished", 0),
    (
        {
            "code": "print(open('data.txt').read())",
            "language": "python",
            "files": {"data.txt": base64.b64encode(b"42").decode()},
        },
        "Success",
        "Finished",
        0,
    ),
]


@pytest.mark.parametrize(("request_body", "status", "run_status", "code"), FUSION)
def test_run_code_is_sandbox_fusion_shaped(
    client: TestClient,
    request_body: dict[str, Any],
    status: str,
    run_status: str | None,
    code: int | None,
) -> None:
    response = client.post("/run_code", json=request_body)
    assert response.status_code == 200, response.text
    out = response.json()
    assert set(out) >= {"status", "message", "compile_result", "run_result", "files"}
    assert out["status"] == status
    if run_status is None:
        assert out["run_result"] is None and out["compile_result"]["return_code"] != 0
    else:
        assert out["run_result"]["status"] == run_status
        if code is not None:
            assert out["run_result"]["return_code"] == code


def test_run_code_says_what_it_capped_and_gives_minus_one_the_maximum(
    client: TestClient,
) -> None:
    grow = "x = bytearray(600 * 2**20)\nprint(len(x) >> 20)"  # more than the 256 MiB default
    roomy = client.post("/run_code", json={"code": grow, "language": "python"}).json()
    assert roomy["status"] == "Success", roomy
    assert roomy["run_result"]["stdout"] == "600\n" and roomy["message"] == ""
    capped = client.post(
        "/run_code", json={"code": "print(1)", "language": "python", "run_timeout": 100}
    ).json()
    assert capped["status"] == "Success"
    assert capped["message"] == "run_timeout 100 s capped at 30 s"


def test_run_code_caps_are_the_servers_settings() -> None:
    settings = small_settings(sandbox_workers=1, run_caps={"run_s": 3, "memory_mb": 128})
    grow = "x = bytearray(300 * 2**20)\nprint(len(x) >> 20)"
    with TestClient(create_app(settings)) as client:
        out = client.post(
            "/run_code",
            json={"code": grow, "language": "python", "run_timeout": 5, "memory_limit_MB": 512},
        ).json()
    assert out["status"] == "Failed", out
    assert out["message"] == "run_timeout 5 s capped at 3 s; memory_limit_MB 512 capped at 128"


def test_run_code_reports_the_output_cap(client: TestClient) -> None:
    flood = "import sys\nsys.stdout.write('x' * (4 * 2**20))"
    out = client.post("/run_code", json={"code": flood, "language": "python"}).json()
    assert out["status"] == "Failed"
    assert out["run_result"]["status"] == "Error"
    assert "output cap" in out["message"]


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/run_code", {"code": "x", "language": "cobol"}, "language"),
        ("/run_code", {"code": "x", "language": "julia"}, "not packaged by Debian 12"),
        ("/run_jupyter", {"cells": []}, "cells"),
        ("/run_jupyter", {"cells": ["1"], "kernel": "ir"}, "kernel"),
        ("/run_jupyter", {"cells": ["1"], "files": {"a": "***"}}, "files.a"),
        ("/run_jupyter", {"cells": ["1"], "files": {"../a": ""}}, "bad file name"),
        ("/run_code", {"code": "x", "language": "python_gpu"}, "no GPU in the sandbox"),
        ("/run_code", {"code": "x", "language": "python", "files": {"a": "***"}}, "files.a"),
        ("/v1/run", {"language": "cobol", "source": "x"}, "unknown language"),
        (
            "/v1/run",
            {"language": "python3", "source": "x", "limits": {"wall_s": 999}},
            "limits.wall_s",
        ),
        # client mistakes, never a retryable sandbox_error or a 500
        (
            "/v1/run",
            {"language": "python3", "source": "x", "cases": [{"files": {"f" * 300: "x"}}]},
            "bad case file name",
        ),
        *[
            (
                "/v1/run",
                {"language": "python3", "source": "x", "cases": [{"files": {name: "x"}}]},
                "bad case file name",
            )
            for name in ("../up", "/etc/passwd", "a//b", "a/./b", "a/", "/".join("d" * 9))
        ],
        (
            "/v1/run",
            {"language": "python3", "source": "x", "cases": [{"argv": ["a" * 200_000]}]},
            "argv",
        ),
        (
            "/v1/run",
            {
                "language": "python3",
                "source": "x",
                "cases": [{"files": {f"f{n}": "" for n in range(513)}}],
            },
            "at most 512 files",
        ),
        (
            "/v1/run",
            {"language": "c", "source": "int main(){}", "build_flags": ["-wrapper", "sh"]},
            "build_flags",
        ),
    ],
)
def test_unusable_run_requests_are_422(
    client: TestClient, path: str, body: dict[str, Any], field: str
) -> None:
    response = client.post(path, json=body)
    assert response.status_code == 422
    assert field in response.json()["error"]["message"]


def test_code_items_score_in_the_sandbox_pool(client: TestClient) -> None:
    ref = {"inputs": ["1 2\n"], "outputs": ["3\n"]}
    items = [
        {
            "verifier": "code",
            "response": "```cpp\n" + CPP + "\n```",
            "reference": ref,
            "params": {"language": "cpp"},
        },
        {"verifier": "code", "response": "print(1)", "reference": ref},
        {"verifier": "code", "response": "print(3)", "reference": {"inputs": ["1"], "outputs": []}},
        {
            "verifier": "code",
            "response": "print(3)",
            "reference": ref,
            "params": {"language": "cobol"},
        },
    ]
    response = client.post("/v1/score", json={"items": items})
    assert response.status_code == 200, response.text
    got = [(r["status"], r["reward"]) for r in response.json()["results"]]
    assert got == [("ok", 1.0), ("ok", 0.0), ("invalid", None), ("invalid", None)]
    messages = [r["error"]["message"] for r in response.json()["results"][2:]]
    assert "reference.outputs" in messages[0] and "params.language" in messages[1]


def test_hung_program_does_not_hang_the_worker(client: TestClient) -> None:
    item = {
        "verifier": "code",
        "response": "while True: pass",
        "reference": {"inputs": ["1"] * 8, "outputs": ["1"] * 8},
        "params": {"time_limit_s": 4},
    }
    response = client.post("/v1/score", json={"items": [item], "item_timeout_s": 2})
    assert response.status_code == 200, response.text
    (result,) = response.json()["results"]
    assert result["status"] == "timeout" and result["reward"] is None
    again = client.post(
        "/v1/score",
        json={
            "items": [
                {
                    "verifier": "code",
                    "response": "print(1)",
                    "reference": {"inputs": [""], "outputs": ["1"]},
                }
            ]
        },
    )
    assert again.json()["results"][0]["reward"] == 1.0
