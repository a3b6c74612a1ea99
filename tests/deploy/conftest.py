"""Locate the deployment tools (helm, Docker Compose v2) for the tests in this folder.

scripts/install-tools.sh puts them in .tools/bin. When one cannot be found, its tests are
skipped with the reason, except under CI (CI set), where a missing tool fails them: a
check that did not run must never read as a pass there.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools" / "bin"


def _missing(tool: str) -> None:
    require(False, f"{tool} not found: run scripts/install-tools.sh (puts it in .tools/bin)")


def _runs(argv: list[str]) -> bool:
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@pytest.fixture(scope="session")
def helm() -> str:
    for candidate in (TOOLS / "helm", shutil.which("helm")):
        if candidate and _runs([str(candidate), "version", "--short"]):
            return str(candidate)
    _missing("helm")
    raise AssertionError("unreachable")


@pytest.fixture(scope="session")
def compose() -> list[str]:
    """argv prefix of a Compose v2 CLI (`docker-compose` v2 or `docker compose`)."""
    candidates: list[list[str]] = [[str(TOOLS / "docker-compose")]]
    if shutil.which("docker"):
        candidates.append(["docker", "compose"])
    if shutil.which("docker-compose"):
        candidates.append(["docker-compose"])
    for argv in candidates:
        try:
            done = subprocess.run(
                [*argv, "version", "--short"],
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        except OSError:
            continue
        # Compose v1 (Python) knows neither --short nor the spec this file uses.
        if done.returncode == 0 and not done.stdout.strip().startswith("1."):
            return argv
    _missing("Docker Compose v2")
    raise AssertionError("unreachable")
