from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parent.parent
PLUGINS = REPO / "tests" / "plugins" / "referee_testplugin"


def _use_test_plugins() -> None:
    """Put the test plugin (its package and a static dist-info declaring its entry
    points) on the path of this process and of every process it starts, rather than
    installing it: a user's environment never gains our broken test plugin."""
    if str(PLUGINS) not in sys.path:
        sys.path.insert(0, str(PLUGINS))
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if str(PLUGINS) not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [str(PLUGINS), *paths] if p)


_use_test_plugins()
# Servers the tests start keep their jobs in a directory of this test run, never in the
# user's own data directory.
os.environ.setdefault("REFEREE_DATA_DIR", tempfile.mkdtemp(prefix="referee-tests-"))


def require(available: bool, reason: str) -> None:
    """Skip when a host tool the test command installs is missing, but fail under CI
    (``CI`` set), where that install ran: a skip there would hide a broken set-up as a pass."""
    if available:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI: scripts/test.sh should have installed it)")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_http(url: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1.0).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer in {timeout_s} s")


def start_server(env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """``referee serve`` as a real subprocess on a free loopback port."""
    port = free_port()
    full_env = {**os.environ, "REFEREE_CPU_WORKERS": "2", **(env or {})}
    # A file, never a pipe nobody reads: once a pipe's buffer is full of log lines, the
    # server blocks on its next one (seen after ~320 logged 4xx answers).
    with tempfile.TemporaryFile(prefix="referee-serve-", suffix=".log") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "referee.service",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            env=full_env,
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(f"{url}/healthz")
    except TimeoutError:
        proc.kill()
        raise
    return proc, url


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def live_server() -> Iterator[str]:
    """Base URL of a real ``referee serve`` with the default embedded executor."""
    proc, url = start_server({"REFEREE_ITEM_TIMEOUT_S": "2"})
    yield url
    stop_server(proc)
