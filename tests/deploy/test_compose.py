"""docker-compose.yml through `docker compose config` (no daemon needed): it validates,
required secrets fail fast, and the resolved services have the promised properties."""

from __future__ import annotations

import json
import os
import subprocess
from functools import cache
from typing import Any

import pytest

from tests.deploy.conftest import ROOT

SECRETS = {"REFEREE_API_KEYS": "compose-test-key", "REDIS_PASSWORD": "compose-test-pw"}
REFEREE_SERVICES = ("gateway", "worker-cpu", "worker-sandbox", "worker-io", "worker-gpu")


def run_config(
    compose: list[str], env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    # --env-file /dev/null: a developer's own .env must not change what is tested.
    clean = {k: v for k, v in os.environ.items() if k not in SECRETS and k != "COMPOSE_PROFILES"}
    return subprocess.run(
        [*compose, "--project-directory", str(ROOT), "--env-file", os.devnull, *args, "config",
         "--format", "json"],
        capture_output=True, text=True, timeout=60, check=False, env={**clean, **env}, cwd=ROOT,
    )  # fmt: skip


@cache
def _resolved(compose: tuple[str, ...], profiles: tuple[str, ...]) -> dict[str, Any]:
    args = [arg for p in profiles for arg in ("--profile", p)]
    done = run_config(list(compose), SECRETS, *args)
    assert done.returncode == 0, done.stderr
    config: dict[str, Any] = json.loads(done.stdout)
    return config


def resolved(compose: list[str], *profiles: str) -> dict[str, Any]:
    return _resolved(tuple(compose), profiles)


@pytest.mark.parametrize("profiles", [(), ("gpu",)])
def test_config_validates(compose: list[str], profiles: tuple[str, ...]) -> None:
    services = resolved(compose, *profiles)["services"]
    expected = {"redis", "gateway", "worker-cpu", "worker-sandbox", "worker-io"}
    assert set(services) == expected | ({"worker-gpu"} if profiles else set())


@pytest.mark.parametrize("missing", sorted(SECRETS))
def test_required_secrets_fail_fast(compose: list[str], missing: str) -> None:
    for value in (None, ""):
        env = {k: v for k, v in SECRETS.items() if k != missing}
        if value is not None:
            env[missing] = value
        done = run_config(compose, env)
        assert done.returncode != 0
        assert f"required variable {missing} is missing a value" in done.stderr


def test_every_service_has_a_healthcheck_and_waits_for_healthy_redis(compose: list[str]) -> None:
    services = resolved(compose, "gpu")["services"]
    for name, service in services.items():
        assert service["healthcheck"]["test"][0] == "CMD", name
        if name != "redis":
            assert service["depends_on"]["redis"]["condition"] == "service_healthy", name


def test_redis_persists_with_an_append_only_file(compose: list[str]) -> None:
    redis = resolved(compose)["services"]["redis"]
    conf = next(v for v in redis["volumes"] if v["target"].endswith("redis.conf"))
    lines = (ROOT / "deploy" / "redis.conf").read_text().splitlines()
    assert conf["read_only"] is True
    assert "appendonly yes" in lines
    assert "maxmemory-policy noeviction" in lines
    assert "redis.conf" in redis["command"][-1]
    data = next(v for v in redis["volumes"] if v["target"] == "/data")
    assert data["type"] == "volume"


@pytest.mark.parametrize("name", REFEREE_SERVICES)
def test_referee_containers_are_locked_down(compose: list[str], name: str) -> None:
    service = resolved(compose, "gpu")["services"][name]
    assert service["user"].split(":")[0] not in ("0", "root")
    assert service["read_only"] is True
    assert service["cap_drop"] == ["ALL"]
    assert not service.get("cap_add")
    assert not service.get("privileged")
    assert "no-new-privileges:true" in service["security_opt"]
    relaxed = {"seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"}
    # Only the sandbox worker relaxes what bubblewrap needs (see the file's comments).
    assert (relaxed <= set(service["security_opt"])) == (name == "worker-sandbox")


def test_only_the_gateway_and_io_worker_leave_the_internal_network(compose: list[str]) -> None:
    config = resolved(compose, "gpu")
    assert config["networks"]["backend"]["internal"] is True
    for name, service in config["services"].items():
        networks = set(service["networks"])
        expected = {"gateway": {"backend", "frontend"}, "worker-io": {"backend", "egress"}}
        assert networks == expected.get(name, {"backend"}), name


def test_gpu_worker_is_a_profile_requesting_a_gpu_with_models_read_only(
    compose: list[str],
) -> None:
    service = resolved(compose, "gpu")["services"]["worker-gpu"]
    assert service["profiles"] == ["gpu"]
    (device,) = service["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia"
    assert device["capabilities"] == ["gpu"]
    assert device["count"] == 1
    (models,) = service["volumes"]
    assert (models["type"], models["source"], models["read_only"]) == (
        "volume", "reward-models", True,
    )  # fmt: skip
    assert service["build"]["args"]["EXTRAS"] == "gpu"
    assert "reward-models" in resolved(compose, "gpu")["volumes"]


@pytest.mark.parametrize(
    ("name", "pool"),
    [("worker-cpu", "cpu"), ("worker-sandbox", "sandbox"), ("worker-io", "io"),
     ("worker-gpu", "gpu")],
)  # fmt: skip
def test_one_worker_per_pool_on_the_bundled_broker(
    compose: list[str], name: str, pool: str
) -> None:
    service = resolved(compose, "gpu")["services"][name]
    assert service["command"][:3] == ["worker", "--pool", pool]
    assert service["environment"]["REFEREE_POOL"] == pool
    broker = service["environment"]["REFEREE_BROKER_URL"]
    assert broker == f"redis://:{SECRETS['REDIS_PASSWORD']}@redis:6379/0"
    assert "REFEREE_API_KEYS" not in service["environment"]


def test_gateway_serves_on_all_interfaces_with_api_keys(compose: list[str]) -> None:
    gateway = resolved(compose)["services"]["gateway"]
    assert gateway["command"] == ["serve", "--host", "0.0.0.0", "--port", "8000"]
    assert gateway["environment"]["REFEREE_API_KEYS"] == SECRETS["REFEREE_API_KEYS"]
    (port,) = gateway["ports"]
    assert (port["target"], port["published"], port["host_ip"]) == (8000, "8000", "127.0.0.1")
