"""A real cluster per test module: our own redis-server (AOF on), workers, a gateway."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import redis

from tests.conftest import REPO, free_port, require, wait_http

pytestmark = pytest.mark.integration

REDIS = shutil.which("redis-server")


@dataclass
class Cluster:
    """Processes of one test cluster; everything is started on loopback only."""

    workdir: Path
    env: dict[str, str]
    redis_port: int = field(default_factory=free_port)
    gateway_port: int = field(default_factory=free_port)
    redis_proc: subprocess.Popen[bytes] | None = None
    gateway: subprocess.Popen[bytes] | None = None
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.gateway_port}"

    @property
    def broker(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    def redis(self) -> redis.Redis:
        return redis.Redis(port=self.redis_port)

    def start_redis(self) -> None:
        assert REDIS
        argv = [
            REDIS,
            "--port",
            str(self.redis_port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--dir",
            str(self.workdir),
        ]
        self.redis_proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if self.redis().ping():
                    return
            except redis.ConnectionError:
                time.sleep(0.05)
        raise TimeoutError("redis-server did not start")

    def stop_redis(self) -> None:
        assert self.redis_proc
        self.redis().shutdown()  # flushes the AOF
        self.redis_proc.wait(timeout=10)

    def start_worker(self, pool: str = "cpu", concurrency: int = 2) -> subprocess.Popen[bytes]:
        argv = [
            sys.executable,
            "-m",
            "referee.service",
            "worker",
            "--pool",
            pool,
            "--concurrency",
            str(concurrency),
        ]
        log = (self.workdir / f"worker-{len(self.workers)}.log").open("wb")
        proc = subprocess.Popen(argv, cwd=REPO, env=self.env, stdout=log, stderr=log)
        self.workers.append(proc)
        return proc

    def wait_consumers(self, pool: str, count: int, timeout_s: float = 30) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            # with keys set, /readyz shows its pools only to an authenticated caller
            keys = self.env.get("REFEREE_API_KEYS", "")
            headers = {"Authorization": f"Bearer {keys.split(',')[0]}"} if keys else {}
            ready = httpx.get(f"{self.url}/readyz", headers=headers).json()
            if ready["pools"].get(pool, {}).get("consumers", 0) >= count:
                return
            time.sleep(0.2)
        raise TimeoutError(f"{count} {pool} consumers did not show up")

    def start_gateway(self) -> None:
        argv = [sys.executable, "-m", "referee.service", "serve", "--port", str(self.gateway_port)]
        log = (self.workdir / "gateway.log").open("ab")
        self.gateway = subprocess.Popen(argv, cwd=REPO, env=self.env, stdout=log, stderr=log)
        wait_http(f"{self.url}/healthz")

    def stop_gateway(self) -> None:
        assert self.gateway
        self.gateway.send_signal(signal.SIGTERM)
        self.gateway.wait(timeout=15)

    def stop_all(self) -> None:
        for proc in [*self.workers, self.gateway]:
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
        if self.redis_proc is not None and self.redis_proc.poll() is None:
            self.redis_proc.kill()
            self.redis_proc.wait(timeout=10)


def make_cluster(tmp_path: Path, **env: str) -> Cluster:
    require(REDIS is not None, "redis-server is not installed (scripts/test.sh installs it)")
    cluster = Cluster(workdir=tmp_path, env={})
    cluster.env = {
        **os.environ,
        "REFEREE_BROKER_URL": cluster.broker,
        "REFEREE_VISIBILITY_TIMEOUT_S": "8",
        "REFEREE_ITEM_TIMEOUT_S": "2",
        **env,
    }
    cluster.start_redis()
    return cluster


@contextlib.contextmanager
def running_cluster(workdir: Path) -> Iterator[Cluster]:
    """Redis + gateway + one cpu worker, stopped on the way out."""
    c = make_cluster(workdir)
    try:
        c.start_gateway()
        c.start_worker()
        c.wait_consumers("cpu", 1)
        yield c
    finally:
        c.stop_all()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A cluster of the test's own (`running_cluster`); tests add more as they need."""
    with running_cluster(tmp_path) as c:
        yield c
