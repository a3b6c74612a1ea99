"""The Docker backend, against a real engine. Skipped cleanly when none answers (this
machine has no Docker daemon), or when the sandbox image is not built."""

from __future__ import annotations

import pytest

from referee.sandbox import Case, CaseStatus, Program, Sandbox, SandboxSettings, SandboxStatus
from referee.sandbox.backends.docker import DockerBackend

from .conftest import FAST

_SETTINGS = SandboxSettings(backend="docker", limits=FAST)
_PROBLEM = DockerBackend(_SETTINGS).problem()
needs_engine = pytest.mark.skipif(_PROBLEM is not None, reason=f"docker: {_PROBLEM}")


@pytest.fixture(scope="module")
def docker_sandbox() -> Sandbox:
    return Sandbox(_SETTINGS)


@needs_engine
def test_hello(docker_sandbox: Sandbox) -> None:
    report = docker_sandbox.run(
        Program(language="python3", source="print(input())"), [Case(stdin="hi\n")]
    )
    assert report.sandbox_status is SandboxStatus.OK, report.message
    assert (report.cases[0].status, report.cases[0].stdout) == (CaseStatus.OK, "hi\n")


@needs_engine
def test_no_network(docker_sandbox: Sandbox) -> None:
    source = (
        "import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=1)\n"
        "    print('ESCAPED')\nexcept OSError:\n    print('contained')\n"
    )
    [case] = docker_sandbox.run(Program(language="python3", source=source), [Case()]).cases
    assert case.stdout == "contained\n"


@needs_engine
def test_timeout_and_output_limit(docker_sandbox: Sandbox) -> None:
    spin = docker_sandbox.run(Program(language="python3", source="while True: pass"), [Case()])
    spam = docker_sandbox.run(
        Program(language="python3", source="while True: print('x'*99)"), [Case()]
    )
    assert spin.cases[0].status is CaseStatus.TIMEOUT
    assert spam.cases[0].status is CaseStatus.OUTPUT_LIMIT


def test_an_unreachable_engine_is_unavailable_not_a_program_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with Sandbox(SandboxSettings(backend="docker", limits=FAST)) as sandbox:
        report = sandbox.run(Program(language="python3", source="print(1)"), [Case()])
    assert report.sandbox_status is SandboxStatus.UNAVAILABLE
    assert "Docker engine" in report.message
