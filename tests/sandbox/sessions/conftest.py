"""Fixtures for session tests: one real launcher (bwrap) per test module, and a factory
that closes every session a test opened (the package's leftover check then proves that
closing left nothing)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from referee.sandbox import SandboxSettings
from referee.sandbox.sessions import Launcher, Session, SessionKind, SessionLimits, SessionSpec
from tests.conftest import require

from ..conftest import _BWRAP_PROBLEM

SMALL = SessionLimits(
    memory_mb=128, disk_mb=16, processes=32, cpu_s=60, output_bytes=64 << 10, file_size_mb=8
)

Open = Callable[..., Session]


@pytest.fixture(scope="module")
def launcher(work_root: Path) -> Iterator[Launcher]:
    require(_BWRAP_PROBLEM is None, f"bwrap: {_BWRAP_PROBLEM}")
    launcher = Launcher(SandboxSettings(backend="bwrap"), max_file_bytes=1 << 20)
    # One session first: the launcher makes its (lasting) program directory then, before
    # any test's leftover check takes stock.
    launcher.start(SessionSpec(kind=SessionKind.PYTHON)).close()
    yield launcher
    launcher.close()


@pytest.fixture
def open_session(launcher: Launcher) -> Iterator[Open]:
    """``open_session(kind, **spec)``: a started session, closed after the test."""
    opened: list[Session] = []

    def start(kind: str = "python", **spec: object) -> Session:
        spec.setdefault("limits", SMALL)
        session = launcher.start(SessionSpec.model_validate({"kind": SessionKind(kind), **spec}))
        opened.append(session)
        return session

    yield start
    for session in opened:
        session.close()
