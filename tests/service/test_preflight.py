"""The start-up self-check: a deployment that cannot run a pool or a verifier says so at
start (banner, /readyz per pool) and answers those items at once with the non-retryable
``not_configured``, never a retryable ``sandbox_error`` and never a reward of 0."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from rich.console import Console

from referee.gpu_rm.registry import ModelRegistry
from referee.gpu_rm.settings import RMSettings
from referee.sandbox.settings import SandboxSettings
from referee.service.banner import print_banner
from referee.service.http.app import create_app
from referee.service.preflight import Problem, check_start, find_problems
from referee.verifiers.code.raw_run import RawRunVerifier
from referee.verifiers.code.verifier import CodeVerifier
from referee.verifiers.engines import EngineSettings
from referee.verifiers.judge.profiles import JudgeProfile
from referee.verifiers.judge.verifier import JudgeVerifier
from referee.verifiers.math import MathVerifier
from referee.verifiers.registry import Registry
from referee.verifiers.reward_model import RewardModelVerifier
from referee.verifiers.types import Pool
from tests.conftest import REPO, free_port
from tests.service.conftest import small_settings

NO_BWRAP = "/nonexistent/bwrap"


def registry() -> Registry:
    reg = Registry()
    for verifier in (
        MathVerifier(),
        CodeVerifier(),
        RawRunVerifier(),
        JudgeVerifier(profiles={}),
        RewardModelVerifier(ModelRegistry(RMSettings())),
    ):
        reg.register(verifier)
    return reg


@pytest.fixture
def broken(monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    """An app on a host where the configured bwrap does not exist."""
    monkeypatch.setenv("REFEREE_SANDBOX_BWRAP_PATH", NO_BWRAP)
    with TestClient(create_app(small_settings(), registry())) as client:
        yield client


def test_finds_the_sandbox_judge_and_reward_model_problems() -> None:
    problems = find_problems(registry(), SandboxSettings(bwrap_path=NO_BWRAP), euid=1000)
    by_component = {p.component: p for p in problems}
    assert set(by_component) == {"pool:sandbox", "verifier:judge", "verifier:rm"}
    sandbox = by_component["pool:sandbox"]
    assert sandbox.pool is Pool.SANDBOX and not sandbox.blocking
    assert "apt-get install bubblewrap" in sandbox.message
    assert "REFEREE_SANDBOX_BACKEND" in sandbox.message
    assert "REFEREE_JUDGE_PROFILES" in by_component["verifier:judge"].message
    assert "REFEREE_RM_MODELS" in by_component["verifier:rm"].message


def test_a_working_host_has_nothing_but_the_root_warning() -> None:
    working = Registry()
    working.register(MathVerifier())
    working.register(CodeVerifier())
    assert find_problems(working, SandboxSettings(), euid=1000) == []
    [root] = find_problems(working, SandboxSettings(), euid=0)
    assert root.component == "host" and "service account" in root.message
    assert root.pool is None and root.verifier is None and not root.blocking


def test_code_items_are_not_configured_at_once_and_never_start_the_pool(
    broken: TestClient,
) -> None:
    items = [
        {"verifier": "code", "response": "print(1)", "reference": {"tests": []}},
        {"verifier": "math", "response": "\\boxed{2}", "reference": "2"},
        {"verifier": "judge", "response": "x", "reference": {"rubric": []}},
    ]
    results = broken.post("/v1/score", json={"items": items}).json()["results"]
    code, math, judge = results
    assert code["status"] == "error" and code["reward"] is None
    assert code["error"]["code"] == "not_configured"
    assert code["error"]["retryable"] is False
    assert "bubblewrap" in code["error"]["message"]
    assert math["status"] == "ok" and math["reward"] == 1.0
    assert judge["error"] == {
        "code": "not_configured",
        "message": judge["error"]["message"],
        "retryable": False,
    }
    assert "REFEREE_JUDGE_PROFILES" in judge["error"]["message"]
    ready = broken.get("/readyz")
    assert ready.status_code == 200  # math still works: the service is ready
    body = ready.json()
    assert body["pools"]["sandbox"]["ready"] is False
    assert body["pools"]["sandbox"]["started"] is False
    assert body["pools"]["cpu"]["ready"] is True
    components = {p["component"] for p in body["problems"]}
    assert {"pool:sandbox", "verifier:judge", "verifier:rm"} <= components


def test_raw_runs_are_a_503_naming_the_fix(broken: TestClient) -> None:
    run = {"language": "python3", "source": "print(1)", "cases": [{"stdin": ""}]}
    response = broken.post("/v1/run", json=run)
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "not_configured"
    assert "bubblewrap" in response.json()["error"]["message"]


def test_an_infrastructure_failure_stays_retryable() -> None:
    reg = Registry()
    profile = JudgeProfile(base_url="http://127.0.0.1:9/v1", model="judge")
    reg.register(JudgeVerifier(profiles={"default": profile}))
    with TestClient(create_app(small_settings(), reg)) as client:
        item = {
            "verifier": "judge",
            "response": "x",
            "reference": {"rubric": [{"id": "a", "text": "is it good"}]},
            "params": {"max_reasks": 0},
        }
        [result] = client.post("/v1/score", json={"items": [item]}).json()["results"]
    assert result["status"] == "error", result
    assert result["error"]["code"] != "not_configured"
    assert result["error"]["retryable"] is True


def test_a_cpu_budget_no_item_can_reach_is_reported_at_start() -> None:
    engines = EngineSettings(cpu_budget_s=10.0)
    found = check_start(Registry(), engines, embedded=False, item_timeout_s=10.0)
    [problem] = [p for p in found if p.component == "settings"]
    assert "REFEREE_CPU_BUDGET_S (10)" in problem.message and not problem.blocking
    fine = check_start(Registry(), engines, embedded=False, item_timeout_s=30.0)
    assert [p for p in fine if p.component == "settings"] == []


def test_banner_escapes_markup_and_says_what_is_disabled() -> None:
    console = Console(record=True, width=200, color_system=None)
    problems = [
        Problem(
            component="pool:sandbox", message="pip install 'referee[docker]'", pool=Pool.SANDBOX
        ),
        Problem(component="host", message="running as root"),
    ]
    print_banner(console, small_settings(), "embedded", problems)
    text = console.export_text()
    assert "referee[docker]" in text
    assert "its items are answered not_configured" in text
    assert "running as root" in text
    console = Console(record=True, width=200, color_system=None)
    print_banner(console, small_settings(), "embedded", [])
    assert "every pool and verifier can work" in console.export_text()


def test_serve_prints_the_banner_before_it_listens() -> None:
    port = free_port()
    env = {**os.environ, "REFEREE_SANDBOX_BWRAP_PATH": NO_BWRAP, "REFEREE_CPU_WORKERS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "referee.service", "serve", "--port", str(port)],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            lines.append(line)
            if "Uvicorn running" in line or not line:
                break
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    text = "".join(lines)
    assert f"referee on http://127.0.0.1:{port}: embedded executor" in text
    assert "! pool:sandbox" in text and "bubblewrap" in text
    assert '"start-up check: pool:sandbox' in text  # the same finding in the JSON log


def test_a_sandbox_worker_refuses_to_start_on_a_host_that_cannot_sandbox() -> None:
    env = {
        **os.environ,
        "REFEREE_SANDBOX_BWRAP_PATH": NO_BWRAP,
        "REFEREE_BROKER_URL": "redis://127.0.0.1:9/0",  # never reached: it stops before
    }
    done = subprocess.run(
        [sys.executable, "-m", "referee.service", "worker", "--pool", "sandbox"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 78, done.stderr
    assert "sandbox worker cannot start" in done.stderr and "bubblewrap" in done.stderr
    assert "Traceback" not in done.stderr


def test_judge_settings_that_fail_to_parse_are_not_configured(tmp_path: Path) -> None:
    bad = tmp_path / "profiles.json"
    bad.write_text("{not json")
    env = {**os.environ, "REFEREE_JUDGE_PROFILES_FILE": str(bad)}
    code = (
        "from referee.verifiers.judge.verifier import JudgeVerifier\n"
        "from referee.verifiers import Item\n"
        "v = JudgeVerifier()\n"
        "print(v.configuration_problem())\n"
        "r = v.score([Item(verifier='judge', response='x', reference={'rubric': []})])[0]\n"
        "print(r.error.code, r.error.retryable)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    problem, outcome = done.stdout.strip().splitlines()
    assert problem.startswith("judge settings:")
    assert outcome == "not_configured False"


def test_unparsable_judge_settings_disable_only_the_judge(monkeypatch: pytest.MonkeyPatch) -> None:
    """Engine settings are read once with the service's; a judge setting that does not
    parse must not stop the service: judge items say why, everything else scores."""
    monkeypatch.setenv("REFEREE_JUDGE_PROFILES", '{"local": {"model": "m"}}')  # no base_url
    settings = small_settings()
    assert settings.engines.judge is None and "base_url" in (settings.engines.judge_error or "")
    with TestClient(create_app(settings)) as client:
        items = [
            {"verifier": "judge", "response": "x", "reference": {"rubric": []}},
            {"verifier": "math", "response": "\\boxed{2}", "reference": "2"},
        ]
        judge, math = client.post("/v1/score", json={"items": items}).json()["results"]
        problems = {p["component"]: p for p in client.get("/readyz").json()["problems"]}
    assert judge["error"]["code"] == "not_configured" and "base_url" in judge["error"]["message"]
    assert math["reward"] == 1.0
    assert "base_url" in problems["verifier:judge"]["message"]
