"""Stateful sessions for multi-turn agents: a persistent interpreter, shell or database
in a sandbox held for the session's life.

from referee.sandbox.sessions import Launcher, SessionKind, SessionSpec
launcher = Launcher(SandboxSettings())
session = launcher.start(SessionSpec(kind=SessionKind.PYTHON))
session.execute("x = 41").status, session.execute("x + 1").display  # "ok", [{"text/plain": "42"}]
session.close()
"""

from referee.sandbox.sessions.launcher import Launcher
from referee.sandbox.sessions.session import Session
from referee.sandbox.sessions.types import (
    ExecError,
    ExecOutcome,
    FileEntry,
    SessionBusy,
    SessionFileProblem,
    SessionKind,
    SessionLimits,
    SessionLost,
    SessionSpec,
)

__all__ = [
    "ExecError",
    "ExecOutcome",
    "FileEntry",
    "Launcher",
    "Session",
    "SessionBusy",
    "SessionFileProblem",
    "SessionKind",
    "SessionLimits",
    "SessionLost",
    "SessionSpec",
]
