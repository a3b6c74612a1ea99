"""The one `Sandbox` of this process, created on first use (never at import).

Worker processes of the ``sandbox`` pool are forked from a server that imports the
verifiers; creating the sandbox lazily means each worker starts its own Python fast-path
server after the fork, and the gateway process (``POST /v1/run``) gets its own too.
"""

from __future__ import annotations

import threading

from referee.sandbox import RunReport, Sandbox, SandboxSettings, SandboxStatus, leftovers
from referee.verifiers.base import ItemError, NotConfigured

_sandbox: Sandbox | None = None
_lock = threading.Lock()


def shared_sandbox() -> Sandbox:
    """This process's sandbox (settings from ``REFEREE_SANDBOX_*``, read on first use)."""
    global _sandbox
    with _lock:
        if _sandbox is None:
            _sandbox = Sandbox()
        return _sandbox


def sweep_leftovers() -> leftovers.Swept:
    """Remove what killed processes left of their runs (`sandbox.leftovers`): called when
    a worker process starts (it may replace one that was killed) and at shutdown."""
    settings = _sandbox.settings if _sandbox is not None else SandboxSettings()
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
