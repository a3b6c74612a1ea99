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


def unusable(backend: Backend) -> str | None:
    """Why ``backend`` cannot run anything on this host, worded for an operator, or None.
    Probes (may do I/O): callers cache it."""
    problem = backend.problem()
    if problem is None:
        return None
    return f"the {backend.name} sandbox backend does not work here: {problem}"


__all__ = ["Backend", "Command", "Execution", "create", "unusable"]
