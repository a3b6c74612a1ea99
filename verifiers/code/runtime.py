"""The sandbox the sandbox verifiers share, created on first use (never at import).

Worker processes of the ``sandbox`` pool are forked from a server that imports the
verifiers; creating the sandbox lazily means each worker starts its own Python fast-path
server after the fork. A `SandboxHandle` belongs to one set of verifiers (one registry),
built from settings handed down, not read from the environment here.
"""

from __future__ import annotations

import threading

from referee.sandbox import RunReport, Sandbox, SandboxSettings, SandboxStatus, leftovers
from referee.verifiers.base import ItemError, NotConfigured


class SandboxHandle:
    """A `Sandbox` for ``settings``, made on the first `get` (in the process that runs
    code), or the given ``sandbox`` as it is. Thread-safe."""

    def __init__(self, settings: SandboxSettings | None = None, sandbox: Sandbox | None = None):
        self.settings = sandbox.settings if sandbox is not None else settings or SandboxSettings()
        self._sandbox = sandbox
        self._lock = threading.Lock()

    def get(self) -> Sandbox:
        with self._lock:
            if self._sandbox is None:
                self._sandbox = Sandbox(self.settings)
            return self._sandbox

    def close(self) -> None:
        """Stop the sandbox's fast-path server, if one was started."""
        with self._lock:
            sandbox, self._sandbox = self._sandbox, None
        if sandbox is not None:
            sandbox.close()


def handle_of(sandbox: Sandbox | SandboxHandle | None) -> SandboxHandle:
    """What a verifier's ``sandbox`` argument means: a handle as it is, a `Sandbox`
    wrapped, None a handle over the environment's settings (library use)."""
    if isinstance(sandbox, SandboxHandle):
        return sandbox
    return SandboxHandle(sandbox=sandbox)


def sweep_leftovers(settings: SandboxSettings) -> leftovers.Swept:
    """Remove what killed processes left of their runs (`sandbox.leftovers`): called when
    a worker process starts (it may replace one that was killed) and at shutdown."""
    return leftovers.sweep(settings.work_root)


def require_ok(report: RunReport) -> RunReport:
    """Raise `ItemError` (status ``error``, retryable) when the sandbox itself failed, and
    `NotConfigured` when it cannot run this program on this host at all: an
    infrastructure failure is never a reward of 0."""
    if report.sandbox_status is SandboxStatus.UNAVAILABLE:
        raise NotConfigured(f"{report.message} (`referee doctor` shows what this host runs)")
    if report.sandbox_status is SandboxStatus.ERROR:
        raise ItemError("sandbox_error", f"sandbox failed: {report.message}")
    return report
