"""Execution backends behind one `Backend` protocol: ``bwrap`` (namespaces, the default on
Linux), ``docker`` (the Docker SDK) and ``process`` (rlimits only: NOT isolating)."""

from __future__ import annotations

from sandbox.backends.base import Backend, Execution, Job
from sandbox.settings import SandboxSettings


def create(settings: SandboxSettings) -> Backend:
    """The backend named by ``settings.backend``. Construction does no I/O."""
    if settings.backend == "bwrap":
        from sandbox.backends.bwrap import BwrapBackend

        return BwrapBackend(settings)
    if settings.backend == "docker":
        from sandbox.backends.docker import DockerBackend

        return DockerBackend(settings)
    from sandbox.backends.process import ProcessBackend

    return ProcessBackend(settings)


__all__ = ["Backend", "Execution", "Job", "create"]
