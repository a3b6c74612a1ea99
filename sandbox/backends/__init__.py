"""Execution backends behind one `Backend` protocol: ``bwrap`` (namespaces, the default on
Linux), ``docker`` (the Docker SDK) and ``process`` (rlimits only: NOT isolating)."""

from __future__ import annotations

from referee.sandbox.backends.base import Backend, Command, Execution
from referee.sandbox.backends.bwrap import BwrapBackend
from referee.sandbox.backends.docker import DockerBackend
from referee.sandbox.backends.process import ProcessBackend
from referee.sandbox.settings import SandboxSettings


def create(settings: SandboxSettings) -> Backend:
    """The backend named by ``settings.backend``. Construction does no I/O."""
    if settings.backend == "bwrap":
        return BwrapBackend(settings)
    if settings.backend == "docker":
        return DockerBackend(settings)
    return ProcessBackend(settings)


__all__ = ["Backend", "Command", "Execution", "create"]
