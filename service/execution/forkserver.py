"""The worker pools' fork server: one per process, started with every verifier imported,
that forks each pool worker. A worker starts in milliseconds, and one replaced mid-run
(killed past a deadline, while the driver threads run) never inherits this process's
threads or locks."""

from __future__ import annotations

import multiprocessing as mp
from multiprocessing import forkserver
from multiprocessing.context import ForkServerContext

from referee.verifiers.preload import PRELOADED

MODULES = ["referee.verifiers.builtin", *PRELOADED, "referee.service.execution.pool_worker"]


def context() -> ForkServerContext:
    """The pools' multiprocessing context, its fork server importing `MODULES`."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(MODULES)
    return ctx


def start() -> None:
    """Launch the fork server now, without waiting for its imports: they run in its own
    process while this one goes on. Pools started later fork from it."""
    context()
    forkserver.ensure_running()
