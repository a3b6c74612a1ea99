"""The start-up self-check: what keeps this deployment from scoring some items.

Run once when the gateway starts (`referee serve` prints it as a banner; `/readyz`
reports it per pool) so that an operator learns of a missing sandbox, judge profile or
reward model before the first item does. Each finding is a `Problem`. A problem tied to
a ``pool`` or a ``verifier`` makes the dispatcher answer that pool's or verifier's items
at once with the non-retryable code ``not_configured`` (never a retryable error, never a
reward of 0); ``blocking`` problems make the whole service not ready.
"""

from __future__ import annotations

import logging
import os

from pydantic import BaseModel, ConfigDict

from referee.sandbox.backends import create as create_backend
from referee.sandbox.backends import unusable
from referee.sandbox.settings import SandboxSettings
from referee.verifiers.base import Configurable
from referee.verifiers.engines import EngineSettings
from referee.verifiers.registry import Registry
from referee.verifiers.types import Pool

log = logging.getLogger(__name__)

RUNNING_AS_ROOT = (
    "running as root: sandboxed runs still start as unprivileged per-run uids, but the "
    "gateway, its spool and the judge keys in its environment are root's; run referee as "
    "a service account in production (the image runs as uid 10001)"
)


class Problem(BaseModel):
    """One finding. ``component`` says where (``pool:sandbox``, ``verifier:judge``,
    ``host``, ``broker``, ``plugin:<name>``); ``pool``/``verifier``, when set, are what it
    disables; ``blocking``: the service as a whole cannot take work."""

    model_config = ConfigDict(frozen=True)

    component: str
    message: str
    blocking: bool = False
    pool: Pool | None = None
    verifier: str | None = None


def check_start(
    registry: Registry, engines: EngineSettings, embedded: bool, item_timeout_s: float
) -> list[Problem]:
    """The start-up check: everything here when ``embedded``; with the distributed
    executor, sandbox and verifiers are the workers' to check (they do as they start)."""
    problems = find_problems(registry, engines.sandbox) if embedded else find_problems(None, None)
    found = budget_problem(engines.cpu_budget_s, item_timeout_s)
    return [*problems, found] if found is not None else problems


def budget_problem(cpu_budget_s: float, item_timeout_s: float) -> Problem | None:
    """A CPU budget no item can reach before its timeout: answers that keep a verifier
    busy come back ``timeout`` again, not scored (`referee.verifiers.budget`)."""
    if cpu_budget_s < item_timeout_s:
        return None
    message = (
        f"REFEREE_CPU_BUDGET_S ({cpu_budget_s:g}) is not under REFEREE_ITEM_TIMEOUT_S "
        f"({item_timeout_s:g}): responses that keep a verifier busy time out instead of "
        "scoring 0 (over_budget); lower the budget or raise the timeout"
    )
    return Problem(component="settings", message=message)


def log_problems(problems: list[Problem]) -> None:
    for problem in problems:
        log.warning("start-up check: %s: %s", problem.component, problem.message)


def find_problems(
    registry: Registry | None, sandbox: SandboxSettings | None, euid: int | None = None
) -> list[Problem]:
    """Probe what this process's scoring depends on. ``registry`` and ``sandbox`` are None
    when that work runs elsewhere (distributed workers check their own host and settings
    when they start). Takes tens of milliseconds (one bwrap probe); never loads a model
    or calls an endpoint."""
    problems = verifier_problems(registry) if registry is not None else []
    if sandbox is not None:
        found = sandbox_problem(sandbox)
        if found is not None:
            problems.append(Problem(component="pool:sandbox", message=found, pool=Pool.SANDBOX))
    if (os.geteuid() if euid is None else euid) == 0:
        problems.append(Problem(component="host", message=RUNNING_AS_ROOT))
    return problems


def sandbox_problem(settings: SandboxSettings) -> str | None:
    """Why the configured sandbox backend cannot run here, naming the fix, or None."""
    problem = unusable(create_backend(settings))
    if problem is not None:
        return f"{problem} (REFEREE_SANDBOX_BACKEND; `referee doctor` shows what this host can run)"
    return None


def verifier_problems(registry: Registry) -> list[Problem]:
    """Verifiers that cannot score any item as configured (`Configurable`)."""
    problems = []
    for verifier in registry.all():
        if isinstance(verifier, Configurable):
            message = verifier.configuration_problem()
            if message is not None:
                name = verifier.name
                problems.append(
                    Problem(component=f"verifier:{name}", message=message, verifier=name)
                )
    return problems
