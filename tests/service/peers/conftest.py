"""The peers' own client code, installed from PyPI (``scripts/test.sh``: verl and OpenRLHF
with ``--no-deps``, the ``sandbox-fusion`` client), pointed at a real ``referee serve``."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import start_server, stop_server


def verl_sandbox_utils() -> ModuleType:
    """``verl.utils.reward_score.sandbox_fusion.utils``, loaded from verl's installed file.
    Loaded by path because importing the ``verl`` package starts with ``import ray``
    (verl's trainer), which a reward client does not need and this environment lacks."""
    spec = importlib.util.find_spec("verl")
    if spec is None or spec.origin is None:
        pytest.fail("verl is not installed: run scripts/test.sh")
    path = Path(spec.origin).parent / "utils" / "reward_score" / "sandbox_fusion" / "utils.py"
    name = "verl_sandbox_fusion_utils"
    if name not in sys.modules:
        loaded = importlib.util.spec_from_file_location(name, path)
        assert loaded is not None and loaded.loader is not None
        module = importlib.util.module_from_spec(loaded)
        loaded.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


def verl_reward_score() -> ModuleType:
    """``verl.utils.reward_score`` (verl's ``default_compute_score``), imported with the
    ``verl`` package's own ``__init__`` skipped (it starts with ``import ray``): a bare
    package object stands in for it, every module below is verl's own."""
    if "verl" not in sys.modules:
        spec = importlib.util.find_spec("verl")
        if spec is None or spec.origin is None:
            pytest.fail("verl is not installed: run scripts/test.sh")
        package = ModuleType("verl")
        package.__path__ = [str(Path(spec.origin).parent)]
        sys.modules["verl"] = package
    return importlib.import_module("verl.utils.reward_score")


@pytest.fixture(scope="module")
def busy_server() -> Iterator[str]:
    """One sandbox worker and one second of queueing allowed: easy to overload."""
    proc, url = start_server({"REFEREE_SANDBOX_WORKERS": "1", "REFEREE_RUN_QUEUE_S": "1"})
    yield url
    stop_server(proc)


KEY = "peer-test-key-0123456789"
RUNTIME = os.environ.get("REFEREE_TEST_RUNTIME_DIR", "/opt/referee/runtime")
"""The runtime scripts/test.sh builds (numpy and friends, as SandboxFusion's image has)."""


@pytest.fixture(scope="module")
def keyed_server() -> Iterator[str]:
    """A server that requires an API key; the peers' clients send none in headers."""
    proc, url = start_server(
        {
            "REFEREE_API_KEYS": KEY,
            "REFEREE_SANDBOX_RUNTIME_DIR": RUNTIME,
            "REFEREE_OPENRLHF_MAPPING": '{"verifier": "math", "reference_column": "answer"}',
        }
    )
    yield url
    stop_server(proc)
